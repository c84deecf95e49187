{#-
  SELECT over the win_probability table macro: P(A wins) + ½ P(draw) between named players from the latest
  ratings of a relation (bt_ratings, leaderboard, a replay model, or for chance, elo2k and pairwise the
  replay's saved state, replay_<system>__state), e.g.
    {{ duckrate.win_probability(ref('bt_ratings'), 'magnus', 'hikaru') }}
    {{ duckrate.win_probability(ref('replay_elo'), ['a', 'b'], 'c', {'system': 'elo', 'advantage': 35}) }}
  player_a and player_b are names or lists of names (pairs in order; one name against a list). A parameter
  whose value is none is left out, so the macro's own default applies (docs/reference.md lists them).
-#}
{% macro win_probability(relation, player_a, player_b, params={}) -%}
  select * from win_probability({{ duckrate._relation_literal(relation) }}, {{ duckrate._sql_literal(player_a) }}, {{ duckrate._sql_literal(player_b) }}
  {%- for key, value in params.items() if value is not none %}, {{ key }} := {{ duckrate._sql_literal(value) }}{% endfor %})
{%- endmacro %}
