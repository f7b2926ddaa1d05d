"""The decision side's records, one module per responsibility."""

from moderation.models.appeals import Appeal, AppealEvent, AppealKind, AppealStatus, OPEN_STATUSES
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
)
from moderation.models.notifications import Notification, NotificationKind

__all__ = [
    "FACT_CHECK_KINDS", "OPEN_STATUSES", "Action", "ActionKind", "Appeal", "AppealEvent", "AppealKind", "AppealStatus",
    "DecisionOutcome", "DistributionChange", "EndReason", "EnforcementPolicy", "FeedSequence", "Notification",
    "NotificationKind", "PageStanding", "PostDistribution", "RatingDecision", "RemovalGround", "RepeatOffenderPolicy",
    "Strike", "StrikeKind",
]
