{#- The raw matches' columns a Bradley-Terry fit reads besides the canonical ones: the `covariates` and the
    `cluster` of var('duckrate_bt_params'), in that order, without repeats. stg_matches carries them through
    so that bt_ratings can fit them. -#}
{% macro _bt_extra_columns() -%}
  {%- set params = var('duckrate_bt_params', {}) or {} -%}
  {%- set names = [] -%}
  {%- set covariates = params.get('covariates') or [] -%}
  {%- if covariates is string -%}{%- set covariates = [covariates] -%}{%- endif -%}
  {%- for name in covariates + ([params.get('cluster')] if params.get('cluster') else []) -%}
    {%- if name | lower in ['source_row', 'match_id', 'played_at', 'player_a', 'player_b', 'score_a', 'league', 'weight', 'period'] -%}
      {{ exceptions.raise_compiler_error("duckrate: var('duckrate_bt_params') names the canonical column '" ~ name ~ "' as a covariate or cluster; name a column of the raw matches") }}
    {%- endif -%}
    {%- if name not in names -%}{%- do names.append(name) -%}{%- endif -%}
  {%- endfor -%}
  {%- do return(names) -%}
{%- endmacro %}
