"""SQL on the published snapshot (being built: ingest.sql)."""
import streamlit as st

st.title("SQL")
st.info("Coming with issue 12.")
