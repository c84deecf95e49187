{#- Replay the rows of ``source`` (a relation with the model's input columns) into ``target_relation`` and leave
    the state after them in ``state_relation``, in chunks of at most duckrate._chunk_size() rows by played_at
    (see the duckrate_replay materialization). ``full``: the replay table is created from scratch and the
    first chunk starts afresh; otherwise the rows of ``source`` replace their keys' rows and the first chunk
    continues from ``state_relation``.

    Between chunks most two-player systems hand their state on in memory: each chunk's compute call takes the
    state the one before kept under its token (``carry``), plus the saved state's rows of its own players,
    and only the last chunk's state is merged into ``state_relation``; a temp table keeps just the carried
    league rows (which rows of an open rating period the next chunk re-rates). Writing a whole state table
    after every chunk cost its size in memory per chunk until the build's transaction ends (100k players of
    the grid system: 0.8 GB a chunk). The systems duckrate_carried_systems() leaves out (per-pair state) and
    the contest system still merge their state into a temp table after every chunk. A whole-history system
    (duckrate_whole_history_systems(): each forecast needs the fit over every earlier match) replays its rows in
    one chunk, whatever the chunk size. -#}
{% macro _replay_in_chunks(system, params, key, source, target_relation, state_relation, full) -%}
  {%- set suffix = target_relation.identifier -%}
  {%- set tokens = 'duckrate_tokens_' ~ suffix -%}
  {%- set carried_tokens = 'duckrate_carried_tokens_' ~ suffix -%}
  {%- set chunk = 'duckrate_chunk_' ~ suffix -%}
  {%- set bounds = 'duckrate_bounds_' ~ suffix -%}
  {%- set running_state = 'duckrate_state_' ~ suffix -%}
  {%- set in_memory = run_query("select list_contains(duckrate_carried_systems(), '" ~ system ~ "')").columns[0].values()[0] -%}
  {%- set saved = none if full else state_relation -%}
  {%- set whole = run_query("select list_contains(duckrate_whole_history_systems(), '" ~ system ~ "')").columns[0].values()[0] -%}
  {%- set chunking = duckrate._chunk_bounds(source, bounds, whole) -%}
  {%- set n_chunks = chunking[0] -%}
  {%- set started = modules.datetime.datetime.now() -%}
  {{ log('duckrate: ' ~ suffix ~ ' replays ' ~ chunking[1] ~ ' rows in ' ~ n_chunks ~ ' chunk' ~ ('s' if n_chunks > 1 else ''), info=True) }}
  {%- for i in range(n_chunks) -%}
    {%- set rows_of = source if n_chunks == 1 else chunk -%}
    {%- set state_from = saved if (loop.first or in_memory) else running_state -%}
    {%- set carry = in_memory and not loop.first -%}
    {%- set state_to = state_relation if loop.last else running_state -%}
    {%- set carry_from = saved if loop.first else running_state -%}
    {% call statement('duckrate_chunk_' ~ i) -%}
      {%- if n_chunks > 1 %}
      create or replace temp table {{ chunk }} as
      select i.* from {{ source }} as i
      where (i.played_at > (select b.lower from {{ bounds }} as b where b.i = {{ i }}) or {{ 'true' if loop.first else 'false' }})
        and (i.played_at <= (select b.upper from {{ bounds }} as b where b.i = {{ i }}) or {{ 'true' if loop.last else 'false' }})
      {%- if carry_from is not none %}
         {#- the open rating period of the chunk (or the build) before is re-rated with this one #}
         or i.{{ key }} in (
           select r.{{ key }} from {{ target_relation }} as r
           join {{ carry_from }} as s on s.kind = 'league' and s.resume_period is not null and s.league is not distinct from r.league
           where r.seq > s.seq)
      {%- endif %};
      {%- endif %}
      create or replace temp table {{ tokens }} as
      select token from duckrate_{{ system }}_token({{ duckrate._sql_literal(rows_of) }}
        {%- for name, value in params.items() %}, {{ name }} := {{ duckrate._sql_literal(value) }}{% endfor %}
        {%- if state_from is not none %}, state := {{ duckrate._sql_literal(state_from) }}{% endif %}
        {%- if carry %}, carry := {{ duckrate._sql_literal(carried_tokens) }}{% endif %});
      {%- if full and loop.first %}
      create or replace table {{ target_relation }} as
      select * from duckrate_{{ system }}_rows({{ duckrate._sql_literal(rows_of) }}, '{{ tokens }}');
      {%- else %}
      delete from {{ target_relation }} where {{ key }} in (select c.{{ key }} from {{ rows_of }} as c);
      insert into {{ target_relation }} by name
      select * from duckrate_{{ system }}_rows({{ duckrate._sql_literal(rows_of) }}, '{{ tokens }}');
      {%- endif %}
      {%- if in_memory and not loop.last %}
      create or replace temp table {{ running_state }} as select * from duckrate_carried_leagues('{{ tokens }}');
      drop table if exists {{ carried_tokens }};
      alter table {{ tokens }} rename to {{ carried_tokens }};
      {%- else %}
      create or replace {{ '' if loop.last else 'temp ' }}table {{ state_to }} as select * from duckrate_next_state('{{ tokens }}'
        {%- if state_from is not none %}, state := {{ duckrate._sql_literal(state_from) }}{% endif %});
      drop table {{ tokens }};
      {%- endif %}
      {%- if n_chunks > 1 %}
      drop table {{ chunk }};
      {%- endif %}
    {%- endcall %}
    {%- if n_chunks > 1 %}{{ duckrate._chunk_progress(suffix, i + 1, n_chunks, chunking[1], started) }}{% endif %}
  {%- endfor %}
  {% call statement('duckrate_chunks_cleanup') -%}
    drop table if exists {{ bounds }};
    drop table if exists {{ running_state }};
    drop table if exists {{ carried_tokens }};
  {%- endcall %}
{%- endmacro %}


{#- Progress after ``done`` of ``n_chunks`` chunks of a replay of ``n_rows`` rows begun at ``started``, in dbt's
    log: rows done (the chunks hold about equal shares, cut at quantiles of played_at), rate, time left. -#}
{% macro _chunk_progress(model, done, n_chunks, n_rows, started) -%}
  {%- set seconds = (modules.datetime.datetime.now() - started).total_seconds() -%}
  {%- set rows = (n_rows * done / n_chunks) | int -%}
  {%- set rate = rows / [seconds, 0.001] | max -%}
  {{ log('duckrate: ' ~ model ~ ' chunk ' ~ done ~ '/' ~ n_chunks ~ ': about ' ~ '{:,}'.format(rows) ~ ' of '
         ~ '{:,}'.format(n_rows) ~ ' rows, ' ~ '{:,.0f}'.format(rate) ~ ' rows/s, about '
         ~ '{:,.0f}'.format((n_rows - rows) / [rate, 0.001] | max) ~ ' s left', info=True) }}
{%- endmacro %}


{#- How many chunks the rows of ``source`` replay in, and how many rows: ``[chunks, rows]``, at most
    duckrate._chunk_size() rows a chunk as far as played_at allows (rows sharing one played_at stay together),
    or one chunk for a ``whole`` history; with more than one, the temp table
    ``bounds`` holds each chunk's (lower, upper] range of played_at (its first lower and last upper unused). -#}
{% macro _chunk_bounds(source, bounds, whole=false) -%}
  {%- set chunk_size = duckrate._chunk_size() -%}
  {%- set n = run_query('select count(*) from ' ~ source).columns[0].values()[0] -%}
  {%- if whole or n <= chunk_size -%}{{ return([1, n]) }}{%- endif -%}
  {%- set k = ((n + chunk_size - 1) // chunk_size) | int -%}
  {% call statement('duckrate_chunk_bounds') -%}
    create or replace temp table {{ bounds }} as
    with q as (
      select quantile_disc(s.played_at, [{% for j in range(1, k) %}{{ j }} / {{ k }}{% if not loop.last %}, {% endif %}{% endfor %}]) as cuts
      from {{ source }} as s
    ), cut as (select unnest(q.cuts) as upper, generate_subscripts(q.cuts, 1) - 1 as i from q)
    select c.i, (select p.upper from cut as p where p.i = c.i - 1) as lower, c.upper from cut as c
    union all
    select {{ k - 1 }} as i, (select max(p.upper) from cut as p) as lower, null as upper
  {%- endcall %}
  {{ return([k, n]) }}
{%- endmacro %}


{#- The most input rows a replay model hands to the Python side at once: var('duckrate_chunk_size'), by
    default the plugin's duckrate_default_chunk_size(). -#}
{% macro _chunk_size() -%}
  {%- set size = var('duckrate_chunk_size', none) -%}
  {%- if size is none -%}
    {%- set size = run_query('select duckrate_default_chunk_size()').columns[0].values()[0] -%}
  {%- endif -%}
  {%- if not (size | int) > 0 -%}
    {{ exceptions.raise_compiler_error('var duckrate_chunk_size = ' ~ size ~ '; expected a whole number of rows > 0') }}
  {%- endif -%}
  {{ return(size | int) }}
{%- endmacro %}
