{#- The raw matches relation named by the project's vars (exactly one of them), as a Relation. -#}
{% macro _raw_matches() -%}
  {%- do return(duckrate._raw_relation('duckrate_matches', 'matches')) -%}
{%- endmacro %}
