from django.apps import AppConfig


class ModerationConfig(AppConfig):
    name = "moderation"
    verbose_name = "Moderation"

    def ready(self) -> None:
        from factcheck.previews import register_appeals_let_go, register_effect_preview, register_post_story
        from moderation import checks, receivers  # noqa: F401  (registers the checks, connects the receiver)
        from moderation.appeal_states import appeals_let_go
        from moderation.effect_preview import preview_effects
        from moderation.timeline import tell_post_story

        # The review pages' answers that only the decision side has (factcheck never imports moderation).
        register_effect_preview(preview_effects)
        register_post_story(tell_post_story)
        register_appeals_let_go(appeals_let_go)
