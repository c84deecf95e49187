{#-
  SELECT over one of duckrate's table macros that read a whole relation (leaderboard, calibration_bins,
  calibration_summary, loss_curve over a replay; bt_lr_test over matches), with named parameters, e.g.
  {{ duckrate.mart('calibration_bins', ref('replays'), {'bins': 20}) }}. A parameter whose value is none (a var left
  null) is left out, so the macro's own default applies (docs/reference.md lists them).
-#}
{% macro mart(name, relation, params={}) -%}
  select * from {{ name }}({{ duckrate._relation_literal(relation) }}
  {%- for key, value in params.items() if value is not none %}, {{ key }} := {{ duckrate._sql_literal(value) }}{% endfor %})
{%- endmacro %}
