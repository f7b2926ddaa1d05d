"""The decision side's records, one module per responsibility."""

from moderation.models.appeals import OPEN_STATUSES, Appeal, AppealEvent, AppealKind, AppealStatus
from moderation.models.decisions import (
    FACT_CHECK_KINDS,
    Action,
    ActionKind,
    DecisionOutcome,
    DistributionChange,
    EndReason,
    EnforcementPolicy,
    FeedSequence,
    PageStanding,
    PostDistribution,
    RatingDecision,
    RemovalGround,
    RepeatOffenderPolicy,
    Strike,
    StrikeKind,
    new_puid,
)
from moderation.models.notifications import NoticeEmail, NoticeHold, Notification, NotificationKind
from moderation.models.reports import ReportAnswer, ReportedPost
from moderation.models.statements import StatementOfReasons
from moderation.models.submissions import (
    AttemptOutcome,
    StatementSubmission,
    StatementSubmissionAttempt,
    SubmissionOutcome,
)

__all__ = [
    "FACT_CHECK_KINDS", "OPEN_STATUSES", "Action", "ActionKind", "Appeal", "AppealEvent", "AppealKind", "AppealStatus",
    "DecisionOutcome", "DistributionChange", "EndReason", "EnforcementPolicy", "FeedSequence", "NoticeEmail",
    "NoticeHold", "Notification", "NotificationKind", "PageStanding", "PostDistribution", "RatingDecision",
    "RemovalGround", "RepeatOffenderPolicy", "ReportAnswer", "ReportedPost",
    "StatementOfReasons", "Strike", "StrikeKind", "AttemptOutcome", "StatementSubmission", "StatementSubmissionAttempt",
    "SubmissionOutcome", "new_puid",
]
