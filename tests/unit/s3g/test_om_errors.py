"""OM's refusals in S3's words (s3g/om_errors.py)."""

from __future__ import annotations

from pyozone.client.errors import CommitOutcomeUnknown, OMException
from pyozone.s3g.errors import S3ErrorCode
from pyozone.s3g.om_errors import s3_error


def test_a_quota_refusal_is_quota_exceeded_with_oms_message() -> None:
    """As Ozone's S3 gateway (S3ErrorTable.QUOTA_EXCEEDED, 403), saying which quota and how much is used."""
    why = "The DiskSpace quota of bucket:b exceeded quotaInBytes: 10 Bytes but diskspace consumed: 30 Bytes."
    error = s3_error(OMException("QUOTA_EXCEEDED", why), Key="k")
    assert (error.code, error.code.status, error.message, error.extra) == (
        S3ErrorCode.QuotaExceeded, 403, why, {"Key": "k"},
    )  # fmt: skip


def test_a_refused_access_says_no_more_than_s3() -> None:
    error = s3_error(OMException("PERMISSION_DENIED", "User bob doesn't have READ permission to access KEY"))
    assert (error.code, error.message) == (S3ErrorCode.AccessDenied, "Access Denied")


def test_a_put_whose_commit_outcome_is_unknown_is_503_and_says_so() -> None:
    """Review of issue 28 defect 2 (C): a retried commit found its session gone after a lost answer; the
    PUT may have been written (then superseded), so it is not NoSuchKey (404) but a 503 that says why."""
    why = "commitKey of /s3v/b/k: outcome unknown: an earlier attempt's answer was lost"
    error = s3_error(CommitOutcomeUnknown(why), Key="k")
    assert (error.code, error.code.status, error.message) == (S3ErrorCode.ServiceUnavailable, 503, why)
