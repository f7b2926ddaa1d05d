"""GOV.UK's error summary for any Django form: every error of a failed submit, with the id of the field it
belongs to, for templates/moderation/_error_summary.html. Here, in the lowest layer, so that both the review
side's forms and the decision side's use this one rule (moderation.forms names it for its views)."""

from __future__ import annotations

from django import forms


def error_summary(form: forms.Form, *, radio_ids: dict[str, str] | None = None) -> list[dict[str, str]]:
    """Each error of a bound form with the id of the field it belongs to.

    A radio group links to its first radio (`radio_ids` names it when the template renders the radios
    itself); an error of the whole form has no field to link to. Each field in error is also marked
    `aria-invalid` and described by its error (`<id>_error`).
    """
    radio_ids = radio_ids or {}
    rows = [{"message": str(message), "target": ""} for message in form.non_field_errors()]
    for name in form.fields:
        errors = form.errors.get(name)
        if not errors:
            continue
        bound = form[name]
        attrs = form.fields[name].widget.attrs
        attrs["aria-invalid"] = "true"
        # Django refers a field to its help text (<id>_helptext) unless the widget names what describes it: once
        # the error is named here, the help text must be named too, or a screen reader stops reading it.
        help_text = f"{bound.auto_id}_helptext" if bound.help_text else ""
        described_by = [attrs.get("aria-describedby", help_text), f"{bound.auto_id}_error"]
        attrs["aria-describedby"] = " ".join(filter(None, described_by))
        target = bound.id_for_label or bound.auto_id
        if isinstance(form.fields[name].widget, forms.RadioSelect):
            target = radio_ids.get(name, f"{bound.auto_id}_0")
        rows += [{"message": str(message), "target": target} for message in errors]
    return rows


def typed_text(form: forms.Form) -> list[tuple[str, str]]:
    """What a person typed into a submitted form's text boxes, as (label, text), for a page that refused to save
    it (someone else decided first, a lease moved on): shown back to them so that no careful reason is lost."""
    typed = []
    for name, field in form.fields.items():
        # Text boxes of any kind (text, URL, e-mail, search), not choices, hidden fields or checkboxes.
        if isinstance(field.widget, forms.Textarea) or getattr(field.widget, "input_type", "") in (
                "text", "url", "email", "search"):
            value = str(form.data.get(form.add_prefix(name), "")).strip()
            if value:
                typed.append((str(field.label or name), value))
    return typed
