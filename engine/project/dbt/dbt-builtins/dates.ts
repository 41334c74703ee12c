/**
 * dbt's built-in date macros (`dbt.dateadd`, `dbt.datediff`, `dbt.date_trunc`,
 * `dbt.last_day`, `dbt.date_spine` …), written for PostgreSQL and DuckDB.
 * Each public macro dispatches through `adapter.dispatch(name, 'dbt')`, so a
 * project's own `default__x` / `postgres__x` takes precedence as in dbt.
 */
export const DATE_MACROS = String.raw`
{% macro current_timestamp() %}{{ return(adapter.dispatch('current_timestamp', 'dbt')()) }}{% endmacro %}
{% macro default__current_timestamp() %}now(){% endmacro %}

{% macro current_timestamp_backcompat() %}{{ return(adapter.dispatch('current_timestamp_backcompat', 'dbt')()) }}{% endmacro %}
{% macro default__current_timestamp_backcompat() %}current_timestamp::timestamp{% endmacro %}

{% macro current_timestamp_in_utc_backcompat() %}{{ return(adapter.dispatch('current_timestamp_in_utc_backcompat', 'dbt')()) }}{% endmacro %}
{% macro default__current_timestamp_in_utc_backcompat() %}(current_timestamp at time zone 'utc')::timestamp{% endmacro %}

{% macro date_trunc(datepart, date) %}{{ return(adapter.dispatch('date_trunc', 'dbt')(datepart, date)) }}{% endmacro %}
{% macro default__date_trunc(datepart, date) %}date_trunc('{{ datepart }}', {{ date }}){% endmacro %}

{% macro dateadd(datepart, interval, from_date_or_timestamp) %}{{ return(adapter.dispatch('dateadd', 'dbt')(datepart, interval, from_date_or_timestamp)) }}{% endmacro %}
{% macro postgres__dateadd(datepart, interval, from_date_or_timestamp) -%}
  {%- set part = datepart | lower | trim -%}
  {%- if part == 'quarter' -%}{%- set part = 'month' -%}{%- set interval = '(' ~ interval ~ ') * 3' -%}{%- endif -%}
  {%- if part == 'week' -%}{%- set part = 'day' -%}{%- set interval = '(' ~ interval ~ ') * 7' -%}{%- endif -%}
  ({{ from_date_or_timestamp }} + ((interval '1 {{ part }}') * ({{ interval }})))
{%- endmacro %}
{% macro duckdb__dateadd(datepart, interval, from_date_or_timestamp) -%}
  {%- set part = datepart | lower | trim -%}
  {%- if part == 'quarter' -%}{%- set part = 'month' -%}{%- set interval = '(' ~ interval ~ ') * 3' -%}{%- endif -%}
  date_add({{ from_date_or_timestamp }}, interval ({{ interval }}) {{ part }})
{%- endmacro %}

{% macro datediff(first_date, second_date, datepart) %}{{ return(adapter.dispatch('datediff', 'dbt')(first_date, second_date, datepart)) }}{% endmacro %}
{% macro duckdb__datediff(first_date, second_date, datepart) -%}
  date_diff('{{ datepart | lower | trim }}', ({{ first_date }})::timestamp, ({{ second_date }})::timestamp)
{%- endmacro %}
{% macro postgres__datediff(first_date, second_date, datepart) -%}
  {%- set part = datepart | lower | trim -%}
  {%- set a = '(' ~ first_date ~ ')::timestamp' -%}
  {%- set b = '(' ~ second_date ~ ')::timestamp' -%}
  {%- set years = "(date_part('year', " ~ b ~ ") - date_part('year', " ~ a ~ "))" -%}
  {%- set days = '(' ~ b ~ '::date - ' ~ a ~ '::date)' -%}
  {%- if part == 'year' -%}{{ years }}
  {%- elif part == 'quarter' -%}({{ years }} * 4 + date_part('quarter', {{ b }}) - date_part('quarter', {{ a }}))
  {%- elif part == 'month' -%}({{ years }} * 12 + date_part('month', {{ b }}) - date_part('month', {{ a }}))
  {%- elif part == 'day' -%}{{ days }}
  {%- elif part == 'week' -%}
    ({{ days }} / 7 + case when date_part('dow', {{ a }}) <= date_part('dow', {{ b }})
      then case when {{ a }} <= {{ b }} then 0 else -1 end
      else case when {{ a }} <= {{ b }} then 1 else 0 end end)
  {%- elif part == 'hour' -%}({{ days }} * 24 + date_part('hour', {{ b }}) - date_part('hour', {{ a }}))
  {%- elif part == 'minute' -%}(({{ days }} * 24 + date_part('hour', {{ b }}) - date_part('hour', {{ a }})) * 60 + date_part('minute', {{ b }}) - date_part('minute', {{ a }}))
  {%- elif part in ['second', 'millisecond', 'microsecond'] -%}
    {%- set scale = {'second': 1, 'millisecond': 1000, 'microsecond': 1000000}[part] -%}
    (floor(extract(epoch from {{ b }}) * {{ scale }}) - floor(extract(epoch from {{ a }}) * {{ scale }}))
  {%- else -%}{{ exceptions.raise_compiler_error("datediff: unsupported datepart '" ~ datepart ~ "' on postgres") }}
  {%- endif -%}
{%- endmacro %}

{% macro last_day(date, datepart) %}{{ return(adapter.dispatch('last_day', 'dbt')(date, datepart)) }}{% endmacro %}
{% macro default__last_day(date, datepart) -%}
  cast({{ dbt.dateadd('day', '-1', dbt.dateadd(datepart, '1', dbt.date_trunc(datepart, date))) }} as date)
{%- endmacro %}

{% macro date(year, month, day) %}{{ return(adapter.dispatch('date', 'dbt')(year, month, day)) }}{% endmacro %}
{% macro default__date(year, month, day) %}make_date({{ year }}, {{ month }}, {{ day }}){% endmacro %}

{% macro get_powers_of_two(upper_bound) %}{{ return(adapter.dispatch('get_powers_of_two', 'dbt')(upper_bound)) }}{% endmacro %}
{% macro default__get_powers_of_two(upper_bound) %}
  {%- if upper_bound <= 0 -%}{{ exceptions.raise_compiler_error("upper bound must be positive") }}{%- endif -%}
  {%- set ns = namespace(n=0, p=1) -%}
  {%- for i in range(64) -%}{%- if ns.p < upper_bound -%}{%- set ns.p = ns.p * 2 -%}{%- set ns.n = ns.n + 1 -%}{%- endif -%}{%- endfor -%}
  {{ return(ns.n) }}
{% endmacro %}

{% macro generate_series(upper_bound) %}{{ return(adapter.dispatch('generate_series', 'dbt')(upper_bound)) }}{% endmacro %}
{% macro default__generate_series(upper_bound) -%}
  select generated_number from generate_series(1, cast({{ upper_bound }} as bigint)) as series(generated_number)
{%- endmacro %}

{% macro get_intervals_between(start_date, end_date, datepart) %}{{ return(adapter.dispatch('get_intervals_between', 'dbt')(start_date, end_date, datepart)) }}{% endmacro %}
{% macro default__get_intervals_between(start_date, end_date, datepart) -%}
  {%- if execute -%}
    {%- set t = run_query('select ' ~ dbt.datediff(start_date, end_date, datepart)) -%}
    {%- if t.rows | length > 0 and t.rows[0][0] is not none -%}{{ return(t.rows[0][0] | int) }}{%- endif -%}
  {%- endif -%}
  {{ return(1) }}
{%- endmacro %}

{% macro date_spine(datepart, start_date, end_date) %}{{ return(adapter.dispatch('date_spine', 'dbt')(datepart, start_date, end_date)) }}{% endmacro %}
{% macro default__date_spine(datepart, start_date, end_date) -%}
  {#- One row per period from start_date (inclusive) to end_date (exclusive), computed in SQL. -#}
  select {{ dbt.dateadd(datepart, 'series.n', start_date) }} as date_{{ datepart }}
  from generate_series(0, cast({{ dbt.datediff(start_date, end_date, datepart) }} as bigint) - 1) as series(n)
{%- endmacro %}
`;
