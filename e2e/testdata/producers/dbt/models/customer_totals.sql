{# With --vars '{hw_fail: true}' the model fails at run time: the test checks the failed run's publication. #}
select c.customer_id, c.full_name, sum(o.order_amount) as total_amount, count(*) as n_orders
from {{ ref('stg_customers') }} c
join {{ ref('stg_orders') }} o on o.customer_id = c.customer_id
{% if var('hw_fail', false) %}join no_such_table x on x.id = c.customer_id{% endif %}
group by c.customer_id, c.full_name
