"""predictabase dashboard: `streamlit run dashboards/app.py` (or `predictabase serve`).

Reads only the published marts snapshot (see `data.py`); pages live in `app_pages/`.
Not `pages/`: Streamlit treats a `pages/` folder next to the entry script as an old-style
multipage app until `st.navigation` has run once in the process, so a cold deep link
(e.g. /perplexity as the first request) would run that page alone, without this file.
"""

from __future__ import annotations

import streamlit as st

import citations

st.set_page_config(page_title="predictabase", page_icon="📈", layout="wide")

pages = [
    st.Page("app_pages/home.py", title="Warehouse", icon=":material/warehouse:", url_path="home", default=True),
    st.Page("app_pages/scoreboard.py", title="Scoreboard", icon=":material/leaderboard:", url_path="scoreboard"),
    st.Page("app_pages/perplexity.py", title="Perplexity", icon=":material/monitoring:", url_path="perplexity"),
    st.Page(
        "app_pages/human_perplexity.py",
        title="Human perplexity",
        icon=":material/psychology:",
        url_path="human-perplexity",
    ),
    st.Page("app_pages/top1.py", title="Top-1 game", icon=":material/target:", url_path="top1"),
    st.Page("app_pages/play_top1.py", title="Play: next token", icon=":material/sports_esports:", url_path="play-top1"),
    st.Page(
        "app_pages/play_pairwise.py", title="Play: which came next", icon=":material/casino:", url_path="play-pairwise"
    ),
    st.Page(
        "app_pages/word_surprisal.py", title="Word surprisal", icon=":material/text_fields:", url_path="word-surprisal"
    ),
    st.Page(
        "app_pages/next_word.py",
        title="Humans vs models: next word",
        icon=":material/compare_arrows:",
        url_path="next-word",
    ),
    st.Page("app_pages/reading_times.py", title="Reading times", icon=":material/menu_book:", url_path="reading-times"),
    st.Page("app_pages/languages.py", title="Languages", icon=":material/translate:", url_path="languages"),
    st.Page("app_pages/wild.py", title="Prompts in the wild", icon=":material/forum:", url_path="wild"),
    st.Page("app_pages/sql.py", title="SQL", icon=":material/database:", url_path="sql"),
]

page = st.navigation(pages)
page.run()
citations.show(page.url_path)  # every page ends with the papers and datasets its numbers come from
