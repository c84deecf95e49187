{#- The raw contest results relation named by the project's vars (exactly one of them), as a Relation. -#}
{% macro _raw_contests() -%}
  {%- do return(duckrate._raw_relation('duckrate_contests', 'contest results')) -%}
{%- endmacro %}
