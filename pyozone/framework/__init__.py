"""Clients of the remote services, one per service (Ozone's hadoop-hdds/framework client side): SCM's block
protocol (`scm_block`, ScmBlockLocationProtocolClientSideTranslatorPB), its container-location and admin
protocol (`scm_admin`, StorageContainerLocationProtocolClientSideTranslatorPB) and its security protocol
(`scm_security`, SCMSecurityProtocolClientSideTranslatorPB); the datanodes' container protocol (`datanode`,
XceiverClientGrpc). OM, the datanodes, the daemons' certificate clients, the key client, admin tools and the
CLI use these; SCM's servers stay in pyozone.scm.server."""
