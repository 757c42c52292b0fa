import { Stack } from 'aws-cdk-lib';
import * as glue from 'aws-cdk-lib/aws-glue';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { ARCHIVE_PREFIX } from '../contract';
import { grantObjects } from './grants';

/**
 * Reading the archive: listing `deliveries/` (what `search` and `export` do for a window), getting
 * its objects (with the bucket's KMS key), and the Glue catalog entries Athena reads the table by.
 */
export function grantReadArchive(scope: Construct, bucket: s3.IBucket, table: glue.CfnTable, grantee: iam.IGrantable): iam.Grant {
  grantObjects(scope, bucket, grantee, ['s3:GetObject'], ARCHIVE_PREFIX);
  const stack = Stack.of(scope);
  const databaseName = (table.databaseName as string) ?? '';
  const tableName = (table.tableInput as glue.CfnTable.TableInputProperty).name!;
  iam.Grant.addToPrincipal({
    grantee,
    actions: ['glue:GetDatabase', 'glue:GetTable', 'glue:GetPartitions'],
    resourceArns: [
      stack.formatArn({ service: 'glue', resource: 'catalog' }),
      stack.formatArn({ service: 'glue', resource: 'database', resourceName: databaseName }),
      stack.formatArn({ service: 'glue', resource: 'table', resourceName: `${databaseName}/${tableName}` }),
    ],
  });
  return iam.Grant.addToPrincipal({
    grantee,
    actions: ['s3:ListBucket'],
    resourceArns: [bucket.bucketArn],
    conditions: { StringLike: { 's3:prefix': [`${ARCHIVE_PREFIX}/*`] } },
  });
}
