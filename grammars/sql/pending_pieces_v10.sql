
CREATE TABLE pending_pieces (
    piece_id VARCHAR NOT NULL PRIMARY KEY,
    host VARCHAR,
    unit VARCHAR,
    boot VARCHAR,
    pid BIGINT,
    first_ts VARCHAR,
    n_lines BIGINT,
    line_hashes VARCHAR[],
    events JSON,
    span JSON,
    ranges JSON,
    updated_at TIMESTAMP
)
