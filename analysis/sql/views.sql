-- Views over one pack for DuckDB: `levels`, `rejects`, `campaigns`.
-- Set the pack's folder first:  SET VARIABLE pack = 'out/demo';
CREATE OR REPLACE VIEW levels AS
    SELECT * FROM read_parquet(getvariable('pack') || '/levels/*.parquet');
CREATE OR REPLACE VIEW rejects AS
    SELECT * FROM read_parquet(getvariable('pack') || '/rejects/rejects.parquet');
CREATE OR REPLACE VIEW campaigns AS
    SELECT * FROM read_parquet(getvariable('pack') || '/campaigns/campaigns.parquet');
