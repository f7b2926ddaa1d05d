"""What a browser posts back from an admin change form, read from the page's own form and inlines: a test changes
the fields it means to change and saves the rest as they were, as staff do."""

from __future__ import annotations

from typing import Any

from django.forms import CheckboxInput, MultiWidget


def _field_data(form) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for bound in form:
        if bound.field.disabled:
            continue
        widget = getattr(bound.field.widget, "widget", bound.field.widget)  # inside RelatedFieldWidgetWrapper
        value = bound.value()
        if isinstance(widget, CheckboxInput):
            if value:
                data[bound.html_name] = "on"
        elif isinstance(widget, MultiWidget):  # a split date and time
            parts = widget.decompress(value) if value else [None] * len(widget.widgets)
            data.update({f"{bound.html_name}_{i}": "" if part is None else str(part) for i, part in enumerate(parts)})
        elif isinstance(value, list | tuple):
            data[bound.html_name] = [str(item) for item in value]
        else:
            data[bound.html_name] = "" if value is None else str(value)
    return data


def change_form_data(response) -> dict[str, Any]:
    """The fields of the admin change form `response` shows, with its inlines (management forms included), as
    they would be posted unchanged."""
    data = _field_data(response.context["adminform"].form)
    for inline in response.context["inline_admin_formsets"]:
        formset = inline.formset
        data.update({f"{formset.prefix}-{name}": value for name, value in formset.management_form.initial.items()})
        for form in formset.forms:
            data.update(_field_data(form))
    return data


def save_user(admin_client, user, **changes) -> None:
    """Staff change `user` on its admin page (its membership inline included: "membership-0-organisation") and
    save, with a reason; a change to None unticks a box (an unticked box is not posted)."""
    url = f"/admin/accounts/user/{user.pk}/change/"
    data = change_form_data(admin_client.get(url))
    data["reason"] = "Staff's change in a test."  # every change of a person's access says why (the form asks)
    for name, value in changes.items():
        if value is None:
            data.pop(name, None)
        else:
            data[name] = value
    response = admin_client.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors if response.context else response
