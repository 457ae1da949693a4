
CREATE TABLE launch_args (
    launch_id VARCHAR NOT NULL,
    name VARCHAR NOT NULL,
    value JSON
);
CREATE TABLE ignored_args (
    name VARCHAR NOT NULL,
    reason VARCHAR
);
