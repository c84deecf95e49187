{#- Whether the project names a raw contest results table (var duckrate_contests_model, _source or _table):
    the contest models (stg_contest_results, the contest replays, contest marts) are built only then. -#}
{% macro _contests_configured() -%}
  {{ return(var('duckrate_contests_model', none) is not none
            or var('duckrate_contests_source', none) is not none
            or var('duckrate_contests_table', none) is not none) }}
{%- endmacro %}
