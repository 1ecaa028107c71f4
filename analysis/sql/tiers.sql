-- Per tier: levels, difficulty range and median, optimal moves, share proven optimal.
SELECT tier,
       count(*)                                  AS levels,
       round(min(difficulty), 3)                 AS difficulty_min,
       round(median(difficulty), 3)              AS difficulty_median,
       round(max(difficulty), 3)                 AS difficulty_max,
       median(moves)                             AS moves_median,
       round(avg(moves_optimal::INTEGER), 3)     AS optimal_share
FROM levels
GROUP BY tier
ORDER BY tier;
