-- The mean of each of the game's metrics (rows) in each tier (columns).
PIVOT (SELECT printf('tier_%02d', tier) AS tier, unnest(map_keys(metrics)) AS metric, unnest(map_values(metrics)) AS value
       FROM levels)
ON tier
USING round(avg(value), 4)
GROUP BY metric
ORDER BY metric;
