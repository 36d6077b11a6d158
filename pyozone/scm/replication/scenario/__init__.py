"""Replication Manager scenarios: files in the JSON format of Ozone's
TestReplicationManagerScenarios (model.py), run through a real Replication Manager with the harness's
fixed surroundings (harness.py) and compared with what they expect (runner.py); `pyozone debug
rm-scenario` is the command line to it."""
