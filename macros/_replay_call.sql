{#- A call of one of a system's table macros: kind 'replay' -> <system>_replay(...), 'state' ->
    <system>_state(...), 'replay_and_state' -> <system>_replay_and_state(...) (both from one run),
    'resume_check' -> <system>_resume_check(...), over ``table`` (a relation or a name), with ``params`` and,
    when given, the saved ``state`` relation to continue from. -#}
{% macro _replay_call(system, kind, table, params, state=none) -%}
  {{ system }}_{{ kind }}({{ duckrate._sql_literal(table) }}
  {%- for name, value in params.items() %}, {{ name }} := {{ duckrate._sql_literal(value) }}{% endfor %}
  {%- if state is not none %}, state := {{ duckrate._sql_literal(state) }}{% endif %})
{%- endmacro %}
