"""The bottom layer: helpers every app may import and that import no app.

Job running (`core.jobs`), bulk COPY (`core.bulk`), admin building blocks (`core.admin_base`),
page numbers (`core.paging`) and the API's error shape (`core.api_errors`). Nothing here knows
about accounts, reviews or decisions; `config/` is the composition root on top of everything.
"""
