CREATE TABLE "rate_limits" (
	"key" text PRIMARY KEY NOT NULL,
	"tat" double precision NOT NULL
);
