"""A page's view in its URL: the widgets that pick what a page shows (corpus, model, measure, ...) keep their
value in a short query parameter, so a view can be linked and reloaded, e.g.
/perplexity?corpus=provo&metric=bits_per_byte.

- On opening a page, a valid value in the URL (an option's own value, `str(option)`, never its label) sets the
  widget; an invalid or absent one leaves the page's default, silently.
- Every run writes the widget's value back into the URL, or removes the parameter when the value is the default:
  the URL always shows the view, whether the user, a callback or a changed list of options set it.
- While the widget lives (its key in `st.session_state`), its value wins over the URL; when the page is left,
  Streamlit drops the widget's state and `st.navigation` the parameters, so a page opens from its own URL only.
  Keys stay page-prefixed (two pages may share a parameter name such as `corpus`, never a widget's state).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st


def _write(param: str, values: list[str]) -> None:
    """The parameter set to `values` (repeated for several), or removed when empty; untouched when equal."""
    if st.query_params.get_all(param) == values:
        return
    if values:
        st.query_params[param] = values if len(values) > 1 else values[0]
    else:
        del st.query_params[param]


def _one(widget, label: str, options: Sequence, key: str, param: str, default: Any, **kwargs):
    options = list(options)
    if not options:
        return widget(label, options, key=key, **kwargs)
    default = default if default in options else options[0]
    if st.session_state.get(key) not in options:  # opening the page, or its options changed: the URL decides
        st.session_state[key] = {str(o): o for o in options}.get(st.query_params.get(param), default)
    value = widget(label, options, key=key, **kwargs)
    _write(param, [] if value == default else [str(value)])
    return value


def selectbox(label: str, options: Sequence, *, key: str, param: str, default: Any = None, where=st, **kwargs):
    """`where.selectbox` (`where`: st or a column) kept in the URL as `?param=value`. `default`: shown without a
    valid value in the URL (the first option when None or not an option)."""
    return _one(where.selectbox, label, options, key, param, default, **kwargs)


def radio(label: str, options: Sequence, *, key: str, param: str, default: Any = None, where=st, **kwargs):
    """`where.radio` kept in the URL as `?param=value` (see `selectbox`)."""
    return _one(where.radio, label, options, key, param, default, **kwargs)


def select_slider(label: str, options: Sequence, *, key: str, param: str, default: Any = None, where=st, **kwargs):
    """`where.select_slider` kept in the URL as `?param=value` (see `selectbox`)."""
    return _one(where.select_slider, label, options, key, param, default, **kwargs)


def multiselect(
    label: str,
    options: Sequence,
    *,
    key: str,
    param: str,
    default: Sequence | None = None,
    where=st,
    pills: bool = False,
    **kwargs,
) -> list:
    """`where.multiselect` kept in the URL as `?param=a&param=b`; `default`: every option unless given. An empty
    selection, or none of the URL's values an option, opens with the default. `pills`: the options as pills, each
    whole and wrapped onto more lines in a narrow column (a multiselect cuts the chips it cannot fit)."""
    options = list(options)
    default = options if default is None else [o for o in default if o in options]
    if key not in st.session_state:
        by_text = {str(o): o for o in options}
        st.session_state[key] = [by_text[v] for v in st.query_params.get_all(param) if v in by_text] or default
    elif any(o not in options for o in st.session_state[key]):
        st.session_state[key] = [o for o in st.session_state[key] if o in options]
    if pills:
        value = where.pills(label, options, selection_mode="multi", key=key, **kwargs) or []
    else:
        value = where.multiselect(label, options, key=key, **kwargs)
    _write(param, [] if value == default else [str(o) for o in value])
    return value


def toggle(label: str, *, key: str, param: str, default: bool = False, where=st, **kwargs) -> bool:
    """`where.toggle` kept in the URL as `?param=true` or `?param=false` when not the default."""
    if key not in st.session_state:
        st.session_state[key] = {"true": True, "false": False}.get(st.query_params.get(param), default)
    value = where.toggle(label, key=key, **kwargs)
    _write(param, [] if value == default else [str(value).lower()])
    return value
