-- Which parameters describe the staged matches best (duckrate's tune(): every parameter set of each system's
-- grid replayed and ranked per league, the holdout protocol of Ebtekar & Liu 2021 or the cumulative one of
-- Tang, Wang & Jin). Built when var('duckrate_tuning') lists systems: a list of names (each with its default
-- grid) or a mapping {system: grid or null}. Each system's var('duckrate_params') are kept fixed.
{{ config(materialized='table', enabled=var('duckrate_tuning', none) is not none) }}
{%- set tuning = var('duckrate_tuning', none) or [] %}
{%- set grids = tuning if tuning is mapping else dict.fromkeys(tuning) %}
{%- set fixed = var('duckrate_params', {}) %}
{%- for system, grid in grids.items() %}
select * from tune('{{ system }}', {{ duckrate._relation_literal(ref('stg_matches')) }},
                   grid := {{ 'NULL' if grid is none else duckrate._sql_literal(tojson(grid)) }},
                   fixed := {{ 'NULL' if fixed.get(system) is none else duckrate._sql_literal(tojson(fixed[system])) }},
                   protocol := {{ duckrate._sql_literal(var('duckrate_tuning_protocol', 'holdout')) }},
                   train_share := {{ var('duckrate_tuning_train_share', 0.1) }})
{% if not loop.last %}union all by name{% endif %}
{%- endfor %}
