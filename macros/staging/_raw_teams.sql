{#- The raw team results relation named by the project's vars (exactly one of them), as a Relation. -#}
{% macro _raw_teams() -%}
  {%- do return(duckrate._raw_relation('duckrate_teams', 'team results')) -%}
{%- endmacro %}
