{#-
  The materialization of the replay models: an incremental replay that continues from its saved state,
  in chunks of bounded size.

  The model's SQL selects the input matches (canonical columns); config(duckrate_system='elo') names
  the system, whose parameters come from var('duckrate_params')[system]. Contest replays (Elo-MMR)
  select contest results instead and set config(duckrate_key='contest_id'): the key that says which
  input rows are already replayed (default 'match_id'); a contest's rows are then added, replaced and
  fingerprinted together, as one key. Team replays select team results (one row per player) keyed by
  'match_id' likewise. Beside the replay table <model> it keeps <model>__state (the
  system's state after the replayed matches, see the README's "Incremental replays") and <model>__build
  (how many input matches were replayed, their fingerprint, and how the last build went: mode 'full' or
  'incremental', why, and its wall-clock seconds).

  A build continues from the saved state, rating only the matches not yet replayed (plus, for rating
  periods, the open period's matches, which are re-rated), unless one of these forces a full replay:
  --full-refresh; no saved state; var('duckrate_incremental') false; an already replayed match that
  changed or vanished (fingerprint); a new match older than the saved state (late arrival); other
  parameters (those of the last build, kept in <model>__build, even when no new match arrived); or a system-specific reason (e.g. Elo's decaying schedule when new players join, or a whole-history
  replay, WHR or TrueSkill Through Time, whenever a saved league gets new matches).

  Either way the matches to replay are replayed in chunks in (played_at, key) order, each continuing from
  the state the one before left (var duckrate_chunk_size, default duckrate_default_chunk_size(): the
  number of input rows the Python side holds at once), so memory stays bounded however long the history;
  a chunk's open rating period is re-rated with the next chunk. Matches sharing one played_at stay in one
  chunk. The replay table equals one replay of the whole input, bit for bit, and the whole build is one
  transaction: readers see the old tables or the new ones. Each chunk's rows and state come from one run
  of the system: duckrate_<system>_token computes, then duckrate_<system>_rows streams the rows into the
  replay table and duckrate_next_state merges the state rows it wrote into the state before it.
-#}
{% materialization duckrate_replay, adapter='duckdb' %}
  {%- set started = modules.datetime.datetime.now() -%}
  {%- set system = config.require('duckrate_system') -%}
  {%- set key = config.get('duckrate_key', 'match_id') -%}
  {%- set params = var('duckrate_params', {}).get(system, {}) -%}
  {%- set target_relation = this.incorporate(type='table') -%}
  {%- set existing = load_cached_relation(this) -%}
  {%- set state_relation = api.Relation.create(database=this.database, schema=this.schema, identifier=this.identifier ~ '__state', type='table') -%}
  {%- set build_relation = api.Relation.create(database=this.database, schema=this.schema, identifier=this.identifier ~ '__build', type='table') -%}
  {%- set input_view = 'duckrate_input_' ~ this.identifier -%}
  {%- set pending_table = 'duckrate_pending_' ~ this.identifier -%}

  {{ run_hooks(pre_hooks, inside_transaction=False) }}
  {{ run_hooks(pre_hooks, inside_transaction=True) }}

  {% call statement('duckrate_input') -%}
    create or replace temp view {{ input_view }} as {{ compiled_code }}
  {%- endcall %}

  {%- set reason = duckrate._replay_rebuild_reason(system, params, existing, state_relation, build_relation, input_view, key) -%}
  {%- if reason is none -%}
    {% call statement('duckrate_pending') -%}
      create or replace temp table {{ pending_table }} as
      select i.* from {{ input_view }} as i
      where not exists (select 1 from {{ target_relation }} as r where r.{{ key }} = i.{{ key }})
         or i.{{ key }} in (
           select r.{{ key }} from {{ target_relation }} as r
           join {{ state_relation }} as s on s.kind = 'league' and s.league is not distinct from r.league
           where r.seq > s.seq)
    {%- endcall %}
    {%- set check = run_query('select reason from ' ~ duckrate._replay_call(system, 'resume_check', pending_table, params, state_relation)) -%}
    {%- set reason = check.columns[0].values()[0] if check.rows | length else none -%}
  {%- endif -%}

  {%- if reason is none -%}
    {{ log('duckrate: ' ~ this.identifier ~ ' continues from its saved state', info=False) }}
    {{ duckrate._replay_in_chunks(system, params, key, pending_table, target_relation, state_relation, false) }}
    {%- set seconds = (modules.datetime.datetime.now() - started).total_seconds() -%}
    {% call statement('main') -%}
      drop table {{ pending_table }};
      {{ duckrate._replay_build_record(target_relation, build_relation, input_view, 'incremental', none, key, seconds, params) }}
    {%- endcall %}
  {%- else -%}
    {{ log('duckrate: ' ~ this.identifier ~ ' replays the whole history: ' ~ reason, info=True) }}
    {{ duckrate._replay_in_chunks(system, params, key, input_view, target_relation, state_relation, true) }}
    {%- set seconds = (modules.datetime.datetime.now() - started).total_seconds() -%}
    {% call statement('main') -%}
      {{ duckrate._replay_build_record(none, build_relation, input_view, 'full', reason, key, seconds, params) }}
    {%- endcall %}
  {%- endif -%}

  {% call statement('duckrate_cleanup') -%}
    drop view if exists {{ input_view }}
  {%- endcall %}

  {{ run_hooks(post_hooks, inside_transaction=True) }}
  {{ adapter.commit() }}
  {{ run_hooks(post_hooks, inside_transaction=False) }}
  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
