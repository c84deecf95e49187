{#-
  SELECT over the win_matrix table macro: win_probability between every two of each league's top players by
  rating, in long form (league, system, player_a, rank_a, player_b, rank_b, ..., p_win_a, p_draw), e.g.
    {{ duckrate.win_matrix(ref('bt_ratings'), {'top': 10}) }}
    {{ duckrate.win_matrix(ref('leaderboard'), {'system': 'glicko2'}) }}
  Parameters as duckrate.win_probability's, plus top (20 by default).
-#}
{% macro win_matrix(relation, params={}) -%}
  {{ duckrate.mart('win_matrix', relation, params) }}
{%- endmacro %}
