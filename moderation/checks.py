"""System checks of the decision side's settings: what the Transparency Database would refuse later."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import Error, register

from moderation.statements.transparency import scope_problems


@register()
def territorial_scope_is_eu_or_eea(app_configs: Any = None, **kwargs: Any) -> list[Error]:
    """Every statement of reasons carries this scope; one code outside the EU/EEA fails every submission."""
    return [
        Error(f"FACTDESK_TERRITORIAL_SCOPE: {problem}.", id="moderation.E001",
              hint="Use ISO 3166-1 alpha-2 codes of EU and EEA countries, comma-separated (Greece is GR).")
        for problem in scope_problems(list(settings.FACTDESK_TERRITORIAL_SCOPE))
    ]
