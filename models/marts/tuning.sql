-- Which parameters describe the staged history best (duckrate's tune(): every parameter set of each system's
-- grid replayed afresh and ranked per league, by the holdout protocol of Ebtekar & Liu 2021 or the cumulative
-- one of Tang, Wang & Jin). Two-player systems from var('duckrate_tuning') over the staged matches, contest
-- systems from var('duckrate_contest_tuning') over the staged contest results: each a list of names (each with
-- its default grid) or a mapping {system: grid or null}. Each system's var('duckrate_params') stay fixed.
{{ config(materialized='table',
          enabled=(var('duckrate_tuning', none) is not none or var('duckrate_contest_tuning', none) is not none)) }}
{%- set parts = [] %}
{%- for macro, tuned, source in [('tune', var('duckrate_tuning', none), 'stg_matches'),
                                  ('tune_contests', var('duckrate_contest_tuning', none), 'stg_contest_results')] %}
  {%- set grids = (tuned if tuned is mapping else dict.fromkeys(tuned)) if tuned is not none else {} %}
  {%- for system, grid in grids.items() %}
    {%- do parts.append((macro, system, grid, source)) %}
  {%- endfor %}
{%- endfor %}
{%- set fixed = var('duckrate_params', {}) %}
{%- for macro, system, grid, source in parts %}
select * from {{ macro }}('{{ system }}', {{ duckrate._relation_literal(ref(source)) }},
                   grid := {{ 'NULL' if grid is none else duckrate._sql_literal(tojson(grid)) }},
                   fixed := {{ 'NULL' if fixed.get(system) is none else duckrate._sql_literal(tojson(fixed[system])) }},
                   protocol := {{ duckrate._sql_literal(var('duckrate_tuning_protocol', 'holdout')) }},
                   train_share := {{ var('duckrate_tuning_train_share', 0.1) }})
{% if not loop.last %}union all by name{% endif %}
{%- endfor %}
