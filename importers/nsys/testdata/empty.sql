-- An export with no events at all (like a 2021.3 capture of a run that did
-- nothing traceable): names and a GPU, but no activity tables. It must import
-- as a valid, empty trace whose capability notes say what is not measurable.
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (0, 'python');
CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);
INSERT INTO ThreadNames VALUES (0, 0, 281546145665170);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, busLocation TEXT, totalMemory INTEGER,
 memoryBandwidth INTEGER, smCount INTEGER, cuDevice INTEGER, computeMajor INTEGER, computeMinor INTEGER);
INSERT INTO TARGET_INFO_GPU VALUES (281474976710656, 0, 'NVIDIA GeForce RTX 3090', '0000:01:00.0', 25447170048, 936096000000, 82, 0, 8, 6);
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);
INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1630000000000000000, '2021-08-26T17:46:40', '2021-08-26T17:46:40');
