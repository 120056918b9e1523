select order_id, customer_id, amount as order_amount, status
from {{ source('raw', 'raw_orders') }}
where status <> 'returned'
