{#- Whether the project names a raw team results table (var duckrate_teams_model, _source or _table): the
    team models (stg_team_results, the team replays) are built only then. -#}
{% macro _teams_configured() -%}
  {{ return(var('duckrate_teams_model', none) is not none
            or var('duckrate_teams_source', none) is not none
            or var('duckrate_teams_table', none) is not none) }}
{%- endmacro %}
