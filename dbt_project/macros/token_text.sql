{#- A vocabulary string as the text it stands for, for people to read and for comparing with a text's tokens.

    Byte-level BPE (GPT-2, SmolLM2, Pythia, Llama 3): each character of the string is one byte through GPT-2's
    byte -> character table (transformers' bytes_to_unicode): bytes 33-126, 161-172 and 174-255 are their own
    character; the other 68 bytes (0-32, 127-160, 173), in order, are characters 256-323. So a character's byte
    is its code point below 256, cp - 256 for 256-288 (bytes 0-32), cp - 289 + 127 for 289-322 (127-160), and 173
    for 323. The bytes are decoded as UTF-8: 'ĠJosÃ©' is ' José', 'âĢĻ' is '’'.
    SentencePiece (Llama 2, Gemma): '▁' is a space; a byte-fallback piece '<0xNN>' is that byte.
    A string that is only part of a character (a multi-byte character split over tokens) has no text of its own:
    it reads as its bytes in hex, '‹bytes e2 80›', never as a garbled letter or U+FFFD. -#}
{% macro token_text(token, byte_level) -%}
case
    when {{ token }} is null then null
    when {{ byte_level }} then coalesce(
        try(decode(from_hex(array_to_string(list_transform(string_split({{ token }}, ''), lambda ch:
            printf('%02x', {{ _byte_of('unicode(ch)') }})), '')))),
        '‹bytes ' || array_to_string(list_transform(string_split({{ token }}, ''), lambda ch:
            printf('%02x', {{ _byte_of('unicode(ch)') }})), ' ') || '›')
    when regexp_full_match({{ token }}, '<0x[0-9A-Fa-f]{2}>') then coalesce(
        try(decode(from_hex(substr({{ token }}, 4, 2)))),
        '‹bytes ' || lower(substr({{ token }}, 4, 2)) || '›')
    else replace({{ token }}, '▁', ' ')
end
{%- endmacro %}

{% macro _byte_of(cp) -%}
(case when {{ cp }} < 256 then {{ cp }} when {{ cp }} < 289 then {{ cp }} - 256
      when {{ cp }} < 323 then {{ cp }} - 289 + 127 when {{ cp }} = 323 then 173 else 63 end)
{%- endmacro %}
