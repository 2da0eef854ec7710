-- The scoreboard, long: one row per predictor and comparison, every pair, so that a comparison a predictor
-- cannot have is a row with a NULL value and the reason why (null_reason), never a missing row.
--
-- Predictors: humans (pooled), every model scored here, every imported model (GPT-3 davinci's token
-- log-probabilities; Pimentel & Meister's and de Varda et al.'s published word surprisals), every model the
-- LM-game authors report (Shlegeris et al.'s (2024) files; seed scoreboard_reference_models maps their names to one key
-- per model). A model found in several origins is one predictor; a cell takes the value computed here first (scored >
-- imported token log-probabilities > imported word surprisals > reported by the authors).
--
-- Comparisons: each value is read from the mart that computes it, nothing is recomputed here:
--   bits_per_byte_<corpus>      mart_model_perplexity.bits_per_byte (the perplexity glossary; 95% bootstrap interval
--                               over docs)
--   top1_accuracy_token         mart_top1_summary, all possible questions: humans' guesses, a GPT-2-tokenizer
--                               model's exact top-1 token, the authors' reported accuracy (Shlegeris et al. 2024,
--                               sec. 3)
--   top1_accuracy_word          the same on the word-token questions (Shlegeris et al. 2024, Figure 2): a model's most
--                               probable next word (word_top1), else its exact token
--   pairwise_perplexity         mart_pairwise_perplexity, all questions, probabilities rounded to the game's 11
--                               choices for every predictor, +-2 sigma (Shlegeris et al. 2024, eqs. 4-5,
--                               sec. 4.1.3 (1))
--   cloze_modal_agreement_<c>   mart_cloze_vs_model_summary.model_top_is_human_modal: share of contexts where the
--                               model's most probable human response is the humans' modal response
--   pnc_<corpus>_<lw|wt>_r      mart_pnc: Pearson r of model surprisal and cloze surprisal (Hao et al. 2020)
--   delta_loglik_<corpus>_<measure>_<lw|wt>_nats_per_word
--                               mart_delta_loglik, method cv_means: held-out ΔLL per word (Hao et al. 2020, eq. 5),
--                               95% t interval over folds; LW/WT word surprisal (Oh & Schuler 2024, eqs. 5-6)
--   temperature_gain_<corpus>_<measure>_nats_per_word
--                               mart_temperature_delta_loglik: what surprisal under softmax(logits / T) gains over
--                               T = 1, T chosen on other folds' words (Liu, Škrjanec & Demberg 2024); the best T in
--                               the note
--   word_entropy_gain_<corpus>_<measure>_nats_per_word
--                               mart_anticipation_delta_loglik, mc_vs_first_token: ΔLL of the word's Monte-Carlo
--                               entropy over its first-token entropy, both beside surprisal (Clark, Oh & Schuler 2025)
{% set dll_method = 'cv_means' %}
{% set game = shipped_corpora('game')[0] %}
with corpora as (
    select corpus, title, has_cloze, reading_measures,
           case corpus {%- for c in shipped_corpora() %}
               when '{{ c }}' then {{ loop.index }}
               {%- endfor %}
               else {{ shipped_corpora() | length + 1 }}
           end as corpus_order
    from {{ ref('mart_corpora') }}
),

measure_names as (
    select * from (values {%- for m in reading_measures() %} ('{{ m }}', '{{ measure_label(m) }}', {{ loop.index }})
                          {%- if not loop.last %},{% endif %}{% endfor %}) as t (measure, measure_label, measure_order)
),

definitions as (
    select * from (
        values ('lw', 'leading-whitespace (LW) surprisal', 1), ('wt', 'whitespace-trailing (WT) surprisal', 2)
    ) as t (definition, definition_label, def_order)
),

cloze_agreement_corpora as (
    -- the corpora whose cloze norms keep every response (UCL); others where a model has one
    select unnest([{{ sql_strings(cloze_corpus_keys('responses')) }}]) as corpus
    union
    select corpus from {{ ref('mart_cloze_vs_model_summary') }} where n_model_top_is_human_modal > 0
),

comparisons as (
    select 'bits_per_byte_' || corpus as comparison, 'bits_per_byte' as family, corpus, title as corpus_title,
           null::varchar as measure, null::varchar as definition,
           'Bits per byte on ' || title as label, 'bits per byte' as unit, false as higher_is_better,
           '95% bootstrap interval over documents' as interval_method, 'bytes' as n_unit, 'perplexity' as page,
           100 + corpus_order as sort_order
    from corpora
    union all
    select 'top1_accuracy_token', 'top1_accuracy', '{{ game }}', '{{ corpus_title(game) }}', null, null,
           'Top-1 accuracy, next token (all questions)', 'share correct', true, 'Wilson 95% interval', 'answers',
           'top1', 201
    union all
    select 'top1_accuracy_word', 'top1_accuracy', '{{ game }}', '{{ corpus_title(game) }}', null, null,
           'Top-1 accuracy, next word (whole-word questions)', 'share correct', true, 'Wilson 95% interval',
           'answers', 'top1', 202
    union all
    select 'pairwise_perplexity', 'pairwise_perplexity', '{{ game }}', '{{ corpus_title(game) }}', null, null,
           'Perplexity in the pairwise game (importance-sampled, 11 choices)', 'perplexity per token', false,
           '±2 standard errors (Shlegeris et al. 2024, sec. 4.1.3)', 'questions', 'human-perplexity', 301
    union all
    select 'cloze_modal_agreement_' || a.corpus, 'cloze_agreement', a.corpus, c.title, null, null,
           'Agreement with the humans'' most common next word, ' || c.title, 'share of contexts', true,
           '95% bootstrap interval over contexts', 'contexts', 'next-word', 400 + c.corpus_order
    from cloze_agreement_corpora as a inner join corpora as c using (corpus)
    union all
    select 'pnc_' || c.corpus || '_' || d.definition || '_r', 'pnc', c.corpus, c.title, null, d.definition,
           'Correlation with cloze surprisal (PNC), ' || c.title || ', ' || upper(d.definition), 'Pearson r', true,
           '95% bootstrap interval over texts', 'words', 'word-surprisal', 500 + 10 * c.corpus_order + d.def_order
    from corpora as c cross join definitions as d
    where c.has_cloze
    union all
    select 'delta_loglik_' || c.corpus || '_' || m.measure || '_' || d.definition || '_nats_per_word', 'delta_loglik',
           c.corpus, c.title, m.measure, d.definition,
           'ΔLL, ' || c.title || ' ' || m.measure_label || ', ' || upper(d.definition), 'nats per word', true,
           '95% t interval over cross-validation folds', 'words', 'reading-times',
           600 + 100 * c.corpus_order + 10 * m.measure_order + d.def_order
    from corpora as c
    cross join unnest(c.reading_measures) as r (measure)
    inner join measure_names as m on m.measure = r.measure
    cross join definitions as d
    union all
    select 'temperature_gain_' || c.corpus || '_' || m.measure || '_nats_per_word', 'temperature_gain', c.corpus,
           c.title, m.measure, 'wt', 'Gain of the best temperature over T = 1, ' || c.title || ' ' || m.measure_label,
           'nats per word', true, '95% interval over words (T chosen on other folds'' words)', 'words',
           'reading-times', 10000 + 100 * c.corpus_order + m.measure_order
    from corpora as c
    cross join unnest(c.reading_measures) as r (measure)
    inner join measure_names as m on m.measure = r.measure
    union all
    select 'word_entropy_gain_' || c.corpus || '_' || m.measure || '_nats_per_word', 'word_entropy_gain', c.corpus,
           c.title, m.measure, 'wt',
           'Word entropy over first-token entropy (ΔLL), ' || c.title || ' ' || m.measure_label,
           'nats per word', true, '95% interval over words', 'words', 'reading-times',
           20000 + 100 * c.corpus_order + m.measure_order
    from corpora as c
    cross join unnest(c.reading_measures) as r (measure)
    inner join measure_names as m on m.measure = r.measure
),

reference_names as (
    select * from {{ ref('scoreboard_reference_models') }}
),

model_table as (
    select model_key, display_name, family, n_parameters from {{ ref('stg_model_table') }}
),

-- every value, with where it comes from; origin_rank orders the origins of one predictor's cell
bpb as (
    select model_key as predictor, 'bits_per_byte_' || corpus as comparison, bits_per_byte as value,
           bits_per_byte_ci_low as ci_low, bits_per_byte_ci_high as ci_high, n_bytes as n,
           case when source = 'scored' then 'scored' else 'imported' end as origin, run_id,
           null::varchar as note
    from {{ ref('mart_model_perplexity') }}
),

top1 as (
    select coalesce(r.predictor, case when s.predictor_kind = 'humans' then 'humans' else s.predictor end)
               as predictor,
           case when s.subset = 'all_possible' then 'top1_accuracy_token' else 'top1_accuracy_word' end
               as comparison,
           s.accuracy as value, s.accuracy_ci_low as ci_low, s.accuracy_ci_high as ci_high, s.n,
           case s.predictor_kind when 'humans' then 'humans' when 'model' then 'scored' else 'reported' end
               as origin,
           null::varchar as run_id,
           case when s.predictor_kind = 'reference'
                then 'as reported by the LM-game authors (' || s.reference_file || '); no interval or n published'
                when s.comparison = 'word_top1' then 'the model''s most probable next word'
                when s.comparison = 'exact_token'
                    then 'the model''s most probable next token (the game''s GPT-2 tokens)'
           end as note,
           -- one value per predictor and subset: a model's word search before its exact token; of the authors'
           -- files, the one behind the paper's Figure 1, then the others
           case s.comparison when 'word_top1' then 0 else 1 end * 10
           + case s.reference_file when 'model_perfs_new_new_new_orig.json' then 1 when 'model_perfs_origin.json' then 2
                                   when 'model_perfs_new_new_orig.json' then 3 when 'model_perfs.json' then 4
                                   else 5 end as pick
    from {{ ref('mart_top1_summary') }} as s
    left join reference_names as r
        on r.origin = 'top1_reference' and r.name = s.predictor and s.predictor_kind = 'reference'
    where s.predictor_kind <> 'model' or s.comparison = 'exact_token' or s.subset = 'word_tokens'
),

pairwise as (
    select case when p.predictor_kind = 'human' then 'humans' else coalesce(r.predictor, p.predictor) end as predictor,
           'pairwise_perplexity' as comparison, p.perplexity as value, p.perplexity_low as ci_low,
           p.perplexity_high as ci_high, p.n_questions as n,
           case when p.predictor_kind = 'human' then 'humans' else 'reported' end as origin, null::varchar as run_id,
           case when p.is_generator then 'the generator G of the game''s samples (its estimate is its true loss)'
                when p.predictor_kind <> 'human'
                    then 'from the LM-game authors'' comparison files, estimated as for humans'
           end as note
    from {{ ref('mart_pairwise_perplexity') }} as p
    left join reference_names as r on r.origin = 'pairwise' and r.name = p.predictor
    where p.subset = 'all' and p.rounding = 'interface_11' and p.uncertainty_method = 'two_sigma'
),

cloze_agreement as (
    select model_key as predictor, 'cloze_modal_agreement_' || corpus as comparison,
           model_top_is_human_modal_mean as value, model_top_is_human_modal_ci_low as ci_low,
           model_top_is_human_modal_ci_high as ci_high, n_model_top_is_human_modal as n, 'scored' as origin,
           null::varchar as run_id, null::varchar as note
    from {{ ref('mart_cloze_vs_model_summary') }}
    where n_model_top_is_human_modal > 0
),

pnc as (
    select model_key as predictor, 'pnc_' || corpus || '_' || definition || '_r' as comparison,
           pnc_pearson_r as value, pnc_ci_low as ci_low, pnc_ci_high as ci_high, n_words as n,
           case run_source when 'scored' then 'scored' when 'imported_words' then 'imported_words' else 'imported' end
               as origin, run_id, null::varchar as note
    from {{ ref('mart_pnc') }}
),

delta_loglik as (
    select model_key as predictor,
           'delta_loglik_' || corpus || '_' || measure || '_' || definition || '_nats_per_word' as comparison,
           delta_loglik_nats_per_row as value, delta_loglik_ci_low_nats_per_row as ci_low,
           delta_loglik_ci_high_nats_per_row as ci_high, n_words as n,
           case run_source when 'scored' then 'scored' when 'imported_words' then 'imported_words' else 'imported' end
               as origin, run_id, null::varchar as note
    from {{ ref('mart_delta_loglik') }}
    where method = '{{ dll_method }}' and status = 'ok'
),

temperature_gain as (
    select model_key as predictor, 'temperature_gain_' || corpus || '_' || measure || '_nats_per_word' as comparison,
           cv_gain_nats_per_word as value, cv_gain_ci_low_nats_per_word as ci_low,
           cv_gain_ci_high_nats_per_word as ci_high, n_words as n, 'scored' as origin, temperature_run_id as run_id,
           'best T = ' || format('{:g}', best_temperature) || ' (95% bootstrap interval '
           || format('{:g}', best_temperature_ci_low) || ' to ' || format('{:g}', best_temperature_ci_high) || ')'
               as note
    from {{ ref('mart_temperature_delta_loglik') }}
    where is_best
),

word_entropy_gain as (
    select model_key as predictor, 'word_entropy_gain_' || corpus || '_' || measure || '_nats_per_word' as comparison,
           delta_loglik_nats_per_word as value, delta_loglik_ci_low_nats_per_word as ci_low,
           delta_loglik_ci_high_nats_per_word as ci_high, n_words as n, 'scored' as origin, entropy_run_id as run_id,
           n_samples || ' whole words sampled a word' as note
    from {{ ref('mart_anticipation_delta_loglik') }}
    where comparison = 'mc_vs_first_token'
),

all_values as (
    select *, 0 as pick from bpb
    union all by name
    select * exclude (pick), pick from top1
    union all by name
    select *, 0 as pick from pairwise
    union all by name
    select *, 0 as pick from cloze_agreement
    union all by name
    select *, 0 as pick from pnc
    union all by name
    select *, 0 as pick from delta_loglik
    union all by name
    select *, 0 as pick from temperature_gain
    union all by name
    select *, 0 as pick from word_entropy_gain
),

ranked_values as (
    select *,
           row_number() over (partition by predictor, comparison
                              order by case origin when 'humans' then 0 when 'scored' then 1 when 'imported' then 2
                                                   when 'imported_words' then 3 else 4 end, pick, run_id) as rn
    from all_values
),

cell_values as (  -- typed here: a mart built empty (a domain without data) may type its columns otherwise
    select predictor, comparison, value::double as value, ci_low::double as ci_low, ci_high::double as ci_high,
           n::bigint as n, origin, run_id::varchar as run_id, note::varchar as note
    from ranked_values where rn = 1
),

predictor_origins as (
    select predictor, origin from all_values
    union all
    select model_key, case when source = 'scored' then 'scored' else 'imported' end
    from {{ ref('mart_models') }} where used_in_marts
),

predictors as (
    select o.predictor,
           case when bool_or(o.origin = 'humans') then 'humans' when bool_or(o.origin = 'scored') then 'scored'
                when bool_or(o.origin in ('imported', 'imported_words')) then 'imported' else 'reference' end
               as predictor_kind,
           bool_or(o.origin = 'scored') as is_scored,
           bool_or(o.origin = 'imported') as has_imported_tokens,
           bool_or(o.origin = 'imported_words') as has_imported_words,
           list(distinct o.origin order by o.origin) as origins,
           (select list(distinct c.family) from cell_values as v inner join comparisons as c using (comparison)
             where v.predictor = o.predictor) as value_families
    from predictor_origins as o
    group by o.predictor
),

named_predictors as (
    select p.*,
           case when p.predictor = 'humans' then 'Humans (pooled)'
                else coalesce(m.display_name, r.display_name, p.predictor) end as display_name,
           case when p.predictor = 'humans' then 'humans' else coalesce(m.family, r.family) end as family,
           coalesce(m.n_parameters, r.n_parameters) as n_parameters,
           -- the corpora an imported model's token log-probabilities cover (for its NULL reasons)
           (select string_agg(distinct c.corpus_title, ', ' order by c.corpus_title)
              from cell_values as v inner join comparisons as c using (comparison)
             where v.predictor = p.predictor and v.origin = 'imported' and c.family = 'bits_per_byte')
               as imported_corpora
    from predictors as p
    left join model_table as m on m.model_key = p.predictor
    left join (select distinct on (predictor) predictor, display_name, family, n_parameters
               from reference_names order by predictor, origin) as r on r.predictor = p.predictor
),

cells as (
    select p.predictor, p.display_name, p.predictor_kind, p.family, p.n_parameters, p.origins,
           c.comparison, c.family as comparison_family, c.label as comparison_label, c.corpus, c.corpus_title,
           c.measure, c.definition, c.unit, c.higher_is_better, c.interval_method, c.n_unit, c.page, c.sort_order,
           v.value, v.ci_low, v.ci_high, v.n, v.origin as value_origin, v.run_id, v.note,
           p.is_scored, p.has_imported_tokens, p.has_imported_words, p.imported_corpora, p.value_families,
           -- the other definition (LW/WT) of the same corpus and measure has a value: WT alone is missing
           bool_or(v.value is not null) over (partition by p.predictor, c.family, c.corpus, c.measure)
               as sibling_has_value
    from named_predictors as p
    cross join comparisons as c
    left join cell_values as v on v.predictor = p.predictor and v.comparison = c.comparison
)

select predictor, display_name, predictor_kind, family as predictor_family, n_parameters, origins as predictor_origins,
       comparison, comparison_family, comparison_label, corpus, measure, definition, unit, higher_is_better,
       value, ci_low, ci_high, interval_method, n, n_unit, value_origin, run_id, note,
       case when value is not null then null
            else {{ scoreboard_null_reason() }}
       end as null_reason,
       -- 1 = the best value of the comparison (ties share the lower rank; NULL without a value)
       case when value is not null then
           rank() over (partition by comparison order by case when higher_is_better then -value else value end)
       end as rank_in_comparison,
       page, sort_order
from cells
