-- nsys 2020.5 / 2021.1 schema: compact DDL, no ENUM_* tables (built-in enum
-- ids are used), no export metadata (producer unknown), no session start time
-- (epoch unknown), TARGET_INFO_GPU with the old deviceId column (renamed to id
-- in 2021.2), KERNEL without mangledName, RUNTIME without callchainId, OSRT_API
-- still with correlationId, no PROCESSES table (names come from ThreadNames).
-- Planted: a pageable HtoD cudaMemcpyAsync, and cudaStreamSynchronize stored as
-- syncType 3 (the ≤ 2024.1 encoding).
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, deviceId INTEGER NOT NULL, name TEXT, busLocation TEXT, isDiscrete INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL, localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL, sharedMemoryExecuted INTEGER, graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER, srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER, migrationCause INTEGER, graphNodeId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, syncType INTEGER NOT NULL, eventId INTEGER NOT NULL);
CREATE TABLE OSRT_API (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, nestingLevel INTEGER, callchainId INTEGER NOT NULL);
INSERT INTO StringIds VALUES (1, 'saxpy'), (2, 'saxpy(int, float, float *, float *)'), (3, 'cudaLaunchKernel_v7000'),
 (4, 'cudaMemcpyAsync_v3020'), (5, 'cudaStreamSynchronize_v3020'), (6, 'saxpy_app'), (7, 'ioctl'), (8, 'cudaMalloc_v3020');
INSERT INTO ThreadNames VALUES (6, 0, 281479338786816 + 777);
INSERT INTO TARGET_INFO_GPU VALUES (281474976710656, 0, 'Tesla V100-SXM2-16GB', '0000:00:1e.0', 1);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES
 (100000, 400000, 0, 281479338787593, 1, 8, 0),
 (500000, 520000, 0, 281479338787593, 2, 4, 0),
 (530000, 540000, 0, 281479338787593, 3, 3, 0),
 (550000, 900000, 0, 281479338787593, 4, 5, 0);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (510000, 600000, 0, 1, 7, 2, 281479338786816, 4194304, 1, NULL, 0, 2, 0, 1, 0, 1, 0, NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (610000, 890000, 0, 1, 7, 3, 281479338786816, 2, 1, 1, 0, 32, 4096, 1, 1, 256, 1, 1, 0, 0, 0, 0, 1, 0, NULL, 0);
INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES (550000, 895000, 0, 1, 7, 4, 281479338786816, 3, 4294967295);
INSERT INTO OSRT_API VALUES (120000, 380000, 27, 281479338787593, 0, 7, 0, 0, 0);
