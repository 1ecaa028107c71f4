-- Seeds not accepted, by status and reason code (`reason_detail` holds the particulars).
SELECT status,
       reason,
       count(*)                                  AS seeds,
       round(100.0 * count(*) / (SELECT count(*) FROM rejects), 2) AS percent
FROM rejects
GROUP BY ALL
ORDER BY seeds DESC, status, reason;
