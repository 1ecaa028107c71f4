-- Seeds not accepted, by status and the reason's head (the text before any ':').
SELECT status,
       trim(split_part(reason, ':', 1))          AS reason,
       count(*)                                  AS seeds,
       round(100.0 * count(*) / (SELECT count(*) FROM rejects), 2) AS percent
FROM rejects
GROUP BY ALL
ORDER BY seeds DESC, status, reason;
