/**
 * dbt's built-in cross-database macros for types, strings, aggregates,
 * arrays and set operators, written for PostgreSQL and DuckDB. Types go
 * through `api.Column.translate_type` as dbt's do, so `dbt.type_string()`
 * and `api.Column.translate_type('string')` agree.
 */
export const SQL_MACROS = String.raw`
{% macro type_string() %}{{ return(adapter.dispatch('type_string', 'dbt')()) }}{% endmacro %}
{% macro default__type_string() %}{{ return(api.Column.translate_type('string')) }}{% endmacro %}
{% macro type_timestamp() %}{{ return(adapter.dispatch('type_timestamp', 'dbt')()) }}{% endmacro %}
{% macro default__type_timestamp() %}{{ return(api.Column.translate_type('timestamp')) }}{% endmacro %}
{% macro type_float() %}{{ return(adapter.dispatch('type_float', 'dbt')()) }}{% endmacro %}
{% macro default__type_float() %}{{ return(api.Column.translate_type('float')) }}{% endmacro %}
{% macro type_int() %}{{ return(adapter.dispatch('type_int', 'dbt')()) }}{% endmacro %}
{% macro default__type_int() %}{{ return(api.Column.translate_type('integer')) }}{% endmacro %}
{% macro type_bigint() %}{{ return(adapter.dispatch('type_bigint', 'dbt')()) }}{% endmacro %}
{% macro default__type_bigint() %}{{ return(api.Column.translate_type('bigint')) }}{% endmacro %}
{% macro type_boolean() %}{{ return(adapter.dispatch('type_boolean', 'dbt')()) }}{% endmacro %}
{% macro default__type_boolean() %}{{ return(api.Column.translate_type('boolean')) }}{% endmacro %}
{% macro type_numeric() %}{{ return(adapter.dispatch('type_numeric', 'dbt')()) }}{% endmacro %}
{% macro default__type_numeric() %}{{ return(api.Column.numeric_type('numeric', 28, 6)) }}{% endmacro %}

{% macro cast(field, type) %}{{ return(adapter.dispatch('cast', 'dbt')(field, type)) }}{% endmacro %}
{% macro default__cast(field, type) %}cast({{ field }} as {{ type }}){% endmacro %}
{% macro safe_cast(field, type) %}{{ return(adapter.dispatch('safe_cast', 'dbt')(field, type)) }}{% endmacro %}
{% macro default__safe_cast(field, type) %}cast({{ field }} as {{ type }}){% endmacro %}
{% macro duckdb__safe_cast(field, type) %}try_cast({{ field }} as {{ type }}){% endmacro %}
{% macro cast_bool_to_text(field) %}{{ return(adapter.dispatch('cast_bool_to_text', 'dbt')(field)) }}{% endmacro %}
{% macro default__cast_bool_to_text(field) %}cast({{ field }} as {{ api.Column.translate_type('string') }}){% endmacro %}

{% macro concat(fields) %}{{ return(adapter.dispatch('concat', 'dbt')(fields)) }}{% endmacro %}
{% macro default__concat(fields) %}concat({{ fields | join(', ') }}){% endmacro %}
{% macro hash(field) %}{{ return(adapter.dispatch('hash', 'dbt')(field)) }}{% endmacro %}
{% macro default__hash(field) %}md5(cast({{ field }} as {{ api.Column.translate_type('string') }})){% endmacro %}
{% macro length(expression) %}{{ return(adapter.dispatch('length', 'dbt')(expression)) }}{% endmacro %}
{% macro default__length(expression) %}length({{ expression }}){% endmacro %}
{% macro position(substring_text, string_text) %}{{ return(adapter.dispatch('position', 'dbt')(substring_text, string_text)) }}{% endmacro %}
{% macro default__position(substring_text, string_text) %}position({{ substring_text }} in {{ string_text }}){% endmacro %}
{% macro replace(field, old_chars, new_chars) %}{{ return(adapter.dispatch('replace', 'dbt')(field, old_chars, new_chars)) }}{% endmacro %}
{% macro default__replace(field, old_chars, new_chars) %}replace({{ field }}, {{ old_chars }}, {{ new_chars }}){% endmacro %}
{% macro right(string_text, length_expression) %}{{ return(adapter.dispatch('right', 'dbt')(string_text, length_expression)) }}{% endmacro %}
{% macro default__right(string_text, length_expression) %}right({{ string_text }}, {{ length_expression }}){% endmacro %}
{% macro split_part(string_text, delimiter_text, part_number) %}{{ return(adapter.dispatch('split_part', 'dbt')(string_text, delimiter_text, part_number)) }}{% endmacro %}
{% macro default__split_part(string_text, delimiter_text, part_number) -%}
  {%- if part_number is number and part_number < 0 -%}
    {#- Counted from the end: the number of parts, plus one, minus the distance from the end. -#}
    split_part({{ string_text }}, {{ delimiter_text }},
      cast((length({{ string_text }}) - length(replace({{ string_text }}, {{ delimiter_text }}, ''))) / length({{ delimiter_text }}) as integer) + 2 + ({{ part_number }}))
  {%- else -%}
    split_part({{ string_text }}, {{ delimiter_text }}, {{ part_number }})
  {%- endif -%}
{%- endmacro %}
{% macro string_literal(value) %}{{ return(adapter.dispatch('string_literal', 'dbt')(value)) }}{% endmacro %}
{% macro default__string_literal(value) %}'{{ value }}'{% endmacro %}
{% macro escape_single_quotes(expression) %}{{ return(adapter.dispatch('escape_single_quotes', 'dbt')(expression)) }}{% endmacro %}
{% macro default__escape_single_quotes(expression) %}{{ expression | replace("'", "''") }}{% endmacro %}

{% macro listagg(measure, delimiter_text="','", order_by_clause=none, limit_num=none) %}{{ return(adapter.dispatch('listagg', 'dbt')(measure, delimiter_text, order_by_clause, limit_num)) }}{% endmacro %}
{% macro default__listagg(measure, delimiter_text, order_by_clause, limit_num) -%}
  {%- if limit_num -%}
    array_to_string((array_agg({{ measure }}{% if order_by_clause %} {{ order_by_clause }}{% endif %}))[1:{{ limit_num }}], {{ delimiter_text }})
  {%- else -%}
    string_agg({{ measure }}, {{ delimiter_text }}{% if order_by_clause %} {{ order_by_clause }}{% endif %})
  {%- endif -%}
{%- endmacro %}
{% macro any_value(expression) %}{{ return(adapter.dispatch('any_value', 'dbt')(expression)) }}{% endmacro %}
{% macro default__any_value(expression) %}any_value({{ expression }}){% endmacro %}
{% macro postgres__any_value(expression) %}min({{ expression }}){% endmacro %}
{% macro bool_or(expression) %}{{ return(adapter.dispatch('bool_or', 'dbt')(expression)) }}{% endmacro %}
{% macro default__bool_or(expression) %}bool_or({{ expression }}){% endmacro %}

{% macro array_construct(inputs=[], data_type=api.Column.translate_type('integer')) %}{{ return(adapter.dispatch('array_construct', 'dbt')(inputs, data_type)) }}{% endmacro %}
{% macro default__array_construct(inputs, data_type) -%}
  {%- if inputs | length > 0 -%}array[ {{ inputs | join(' , ') }} ]::{{ data_type }}[]{%- else -%}array[]::{{ data_type }}[]{%- endif -%}
{%- endmacro %}
{% macro array_append(array, new_element) %}{{ return(adapter.dispatch('array_append', 'dbt')(array, new_element)) }}{% endmacro %}
{% macro default__array_append(array, new_element) %}array_append({{ array }}, {{ new_element }}){% endmacro %}
{% macro array_concat(array_1, array_2) %}{{ return(adapter.dispatch('array_concat', 'dbt')(array_1, array_2)) }}{% endmacro %}
{% macro default__array_concat(array_1, array_2) %}array_cat({{ array_1 }}, {{ array_2 }}){% endmacro %}

{% macro except() %}{{ return(adapter.dispatch('except', 'dbt')()) }}{% endmacro %}
{% macro default__except() %}except{% endmacro %}
{% macro intersect() %}{{ return(adapter.dispatch('intersect', 'dbt')()) }}{% endmacro %}
{% macro default__intersect() %}intersect{% endmacro %}
`;
