SELECT version, last_seq FROM projections WHERE name = :name;
