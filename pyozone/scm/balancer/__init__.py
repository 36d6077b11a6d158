"""The Container Balancer (issue 32): Ozone's ContainerBalancer, ContainerBalancerTask and MoveManager."""
