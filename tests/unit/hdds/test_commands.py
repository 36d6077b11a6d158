def test_command_ids_seeded_from_a_floor_go_on_from_it_and_never_back() -> None:
    """Review R22 D4: every SCM process numbered its commands from 1, so a new leader's ids repeated the
    deposed one's; an SCM daemon seeds them from the clock, as Ozone's HddsIdFactory."""
    from pyozone.hdds.commands import CloseContainerCommand, seed_command_ids

    before = CloseContainerCommand(container_id=1).id
    seed_command_ids(before + 1_000)
    seeded = CloseContainerCommand(container_id=1).id
    assert seeded == before + 1_000
    seed_command_ids(5)  # a floor below the ids handed out: they go on
    assert CloseContainerCommand(container_id=1).id == seeded + 1
