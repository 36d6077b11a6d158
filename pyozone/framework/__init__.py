"""Clients of the remote services, one per service (Ozone's hadoop-hdds/framework client side): SCM's block
protocol (ScmBlockLocationProtocolClientSideTranslatorPB), its container-location and admin protocol
(StorageContainerLocationProtocolClientSideTranslatorPB). OM, the datanodes, admin tools and the CLI use
these; SCM's servers stay in pyozone.scm.server."""
