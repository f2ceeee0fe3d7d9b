DELETE FROM projections WHERE name = :name;
