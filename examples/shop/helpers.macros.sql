{% macro cents(col) %}cast(round({{ col }} * 100) as bigint){% endmacro %}
