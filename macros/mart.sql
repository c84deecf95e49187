{#-
  SELECT over one of duckrate's table macros that read a whole relation (leaderboard, calibration_bins,
  calibration_summary, loss_curve over a replay; bt_lr_test over matches), with named parameters, e.g.
  {{ duckrate.mart('calibration_bins', ref('replays'), {'bins': 20}) }}.
-#}
{% macro mart(name, relation, params={}) -%}
  select * from {{ name }}({{ duckrate._relation_literal(relation) }}
  {%- for key, value in params.items() %}, {{ key }} := {{ duckrate._sql_literal(value) }}{% endfor %})
{%- endmacro %}
