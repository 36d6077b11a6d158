from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class NodeType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    NODE_TYPE_UNSPECIFIED: _ClassVar[NodeType]
    OM: _ClassVar[NodeType]
    SCM: _ClassVar[NodeType]
    DATANODE: _ClassVar[NodeType]
    S3GATEWAY: _ClassVar[NodeType]
    USER: _ClassVar[NodeType]
    JOIN: _ClassVar[NodeType]
NODE_TYPE_UNSPECIFIED: NodeType
OM: NodeType
SCM: NodeType
DATANODE: NodeType
S3GATEWAY: NodeType
USER: NodeType
JOIN: NodeType

class SCMGetCACertificateRequestProto(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class SCMGetCertRequestProto(_message.Message):
    __slots__ = ("CSR",)
    CSR_FIELD_NUMBER: _ClassVar[int]
    CSR: str
    def __init__(self, CSR: _Optional[str] = ...) -> None: ...

class ScmNodeDetailsProto(_message.Message):
    __slots__ = ("scmNodeId", "clusterId", "scmId")
    SCMNODEID_FIELD_NUMBER: _ClassVar[int]
    CLUSTERID_FIELD_NUMBER: _ClassVar[int]
    SCMID_FIELD_NUMBER: _ClassVar[int]
    scmNodeId: str
    clusterId: str
    scmId: str
    def __init__(self, scmNodeId: _Optional[str] = ..., clusterId: _Optional[str] = ..., scmId: _Optional[str] = ...) -> None: ...

class SCMGetSCMCertRequestProto(_message.Message):
    __slots__ = ("scmDetails", "CSR")
    SCMDETAILS_FIELD_NUMBER: _ClassVar[int]
    CSR_FIELD_NUMBER: _ClassVar[int]
    scmDetails: ScmNodeDetailsProto
    CSR: str
    def __init__(self, scmDetails: _Optional[_Union[ScmNodeDetailsProto, _Mapping]] = ..., CSR: _Optional[str] = ...) -> None: ...

class SCMGetCertResponseProto(_message.Message):
    __slots__ = ("x509Certificate", "x509CACertificate")
    X509CERTIFICATE_FIELD_NUMBER: _ClassVar[int]
    X509CACERTIFICATE_FIELD_NUMBER: _ClassVar[int]
    x509Certificate: str
    x509CACertificate: str
    def __init__(self, x509Certificate: _Optional[str] = ..., x509CACertificate: _Optional[str] = ...) -> None: ...

class SCMGetCertificateRequestProto(_message.Message):
    __slots__ = ("certSerialId",)
    CERTSERIALID_FIELD_NUMBER: _ClassVar[int]
    certSerialId: str
    def __init__(self, certSerialId: _Optional[str] = ...) -> None: ...

class SCMListCertificateRequestProto(_message.Message):
    __slots__ = ("role", "startCertId", "count", "isRevoked")
    ROLE_FIELD_NUMBER: _ClassVar[int]
    STARTCERTID_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    ISREVOKED_FIELD_NUMBER: _ClassVar[int]
    role: NodeType
    startCertId: int
    count: int
    isRevoked: bool
    def __init__(self, role: _Optional[_Union[NodeType, str]] = ..., startCertId: _Optional[int] = ..., count: _Optional[int] = ..., isRevoked: _Optional[bool] = ...) -> None: ...

class SCMListCertificateResponseProto(_message.Message):
    __slots__ = ("certificates",)
    CERTIFICATES_FIELD_NUMBER: _ClassVar[int]
    certificates: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, certificates: _Optional[_Iterable[str]] = ...) -> None: ...

class SCMCreateJoinTokenRequestProto(_message.Message):
    __slots__ = ("role", "name", "CSR", "datanode", "omNode")
    ROLE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    CSR_FIELD_NUMBER: _ClassVar[int]
    DATANODE_FIELD_NUMBER: _ClassVar[int]
    OMNODE_FIELD_NUMBER: _ClassVar[int]
    role: NodeType
    name: str
    CSR: str
    datanode: str
    omNode: str
    def __init__(self, role: _Optional[_Union[NodeType, str]] = ..., name: _Optional[str] = ..., CSR: _Optional[str] = ..., datanode: _Optional[str] = ..., omNode: _Optional[str] = ...) -> None: ...

class SCMRevokeCertificatesRequestProto(_message.Message):
    __slots__ = ("certIds", "reason", "names")
    CERTIDS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    NAMES_FIELD_NUMBER: _ClassVar[int]
    certIds: _containers.RepeatedScalarFieldContainer[str]
    reason: int
    names: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, certIds: _Optional[_Iterable[str]] = ..., reason: _Optional[int] = ..., names: _Optional[_Iterable[str]] = ...) -> None: ...

class SCMRevokeCertificatesResponseProto(_message.Message):
    __slots__ = ("crlId",)
    CRLID_FIELD_NUMBER: _ClassVar[int]
    crlId: int
    def __init__(self, crlId: _Optional[int] = ...) -> None: ...

class SCMGetCrlRequestProto(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class SCMGetCrlResponseProto(_message.Message):
    __slots__ = ("crlId", "x509CRL")
    CRLID_FIELD_NUMBER: _ClassVar[int]
    X509CRL_FIELD_NUMBER: _ClassVar[int]
    crlId: int
    x509CRL: str
    def __init__(self, crlId: _Optional[int] = ..., x509CRL: _Optional[str] = ...) -> None: ...

class ManagedSecretKey(_message.Message):
    __slots__ = ("id", "creationTime", "expiryTime", "algorithm", "encoded")
    ID_FIELD_NUMBER: _ClassVar[int]
    CREATIONTIME_FIELD_NUMBER: _ClassVar[int]
    EXPIRYTIME_FIELD_NUMBER: _ClassVar[int]
    ALGORITHM_FIELD_NUMBER: _ClassVar[int]
    ENCODED_FIELD_NUMBER: _ClassVar[int]
    id: str
    creationTime: int
    expiryTime: int
    algorithm: str
    encoded: bytes
    def __init__(self, id: _Optional[str] = ..., creationTime: _Optional[int] = ..., expiryTime: _Optional[int] = ..., algorithm: _Optional[str] = ..., encoded: _Optional[bytes] = ...) -> None: ...

class SCMGetCurrentSecretKeyRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class SCMGetCurrentSecretKeyResponse(_message.Message):
    __slots__ = ("secretKey",)
    SECRETKEY_FIELD_NUMBER: _ClassVar[int]
    secretKey: ManagedSecretKey
    def __init__(self, secretKey: _Optional[_Union[ManagedSecretKey, _Mapping]] = ...) -> None: ...

class SCMGetSecretKeyRequest(_message.Message):
    __slots__ = ("secretKeyId",)
    SECRETKEYID_FIELD_NUMBER: _ClassVar[int]
    secretKeyId: str
    def __init__(self, secretKeyId: _Optional[str] = ...) -> None: ...

class SCMGetSecretKeyResponse(_message.Message):
    __slots__ = ("secretKeyProto",)
    SECRETKEYPROTO_FIELD_NUMBER: _ClassVar[int]
    secretKeyProto: ManagedSecretKey
    def __init__(self, secretKeyProto: _Optional[_Union[ManagedSecretKey, _Mapping]] = ...) -> None: ...

class SCMGetAllSecretKeysRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class SCMSecretKeysListResponse(_message.Message):
    __slots__ = ("secretKeys",)
    SECRETKEYS_FIELD_NUMBER: _ClassVar[int]
    secretKeys: _containers.RepeatedCompositeFieldContainer[ManagedSecretKey]
    def __init__(self, secretKeys: _Optional[_Iterable[_Union[ManagedSecretKey, _Mapping]]] = ...) -> None: ...
