SELECT name, version, last_seq FROM projections ORDER BY name;
