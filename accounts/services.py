"""Issuing API tokens: what `issue_token` calls. Creating users with an organisation or pages is factcheck.members'."""

from __future__ import annotations

from accounts.models import ApiToken, User
from audit.models import AuditVerb
from audit.services import record_event


def issue_token(*, user: User) -> str:
    token, raw = ApiToken.issue(user=user)
    record_event(actor=None, verb=AuditVerb.TOKEN_ISSUED, target=token, data={"user": user.username})
    return raw
