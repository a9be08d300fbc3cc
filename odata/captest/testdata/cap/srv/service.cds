// The entities of the service that migrate's example plans load
// (docs/service.md), in CAP's terms: the same names, keys the server
// numbers as UUIDs, order lines as a composition of their order, and an
// ETag on every entity, so that CAP asks for If-Match on PATCH and DELETE.
@path: 'demo'
service demo {
  aspect tagged {
    modifiedAt : Timestamp @cds.on.insert: $now  @cds.on.update: $now  @odata.etag;
  }

  entity FAMILY_LOG : tagged {
    key FAMILYNAME : String(8);
        FAMILYDESC : String(32);
        DEBITFLAG  : String(1);
  }

  // Pages of 3 parts: reads follow @odata.nextLink (CAP's default page
  // is 1,000 rows).
  @cds.query.limit: { default: 3, max: 3 }
  entity LOGPART : tagged {
    key PARTNAME   : String(15);
        PARTDES    : String(48);
        FAMILYNAME : String(8);
        BARCODE    : String(16);
        PRICE      : Decimal(15, 4);
  }

  entity CUSTOMERS : tagged {
    key CUSTNAME : String(16);
        CUSTDES  : String(48);
        PHONE    : String(20);
        ADDRESS  : String(80);
        // Notes as CAP writes a composition most often: of an aspect,
        // whose lines are keyed by their customer's key (up__CUSTNAME,
        // filled from the parent) and a Guid of their own.
        GENCUSTNOTES_SUBFORM : Composition of many {
          key ID   : UUID;
              NOTE : String(80);
        };
        // The customer's text: one object, as the order's.
        CUSTOMERSTEXT_SUBFORM : Composition of one {
          TEXT   : LargeString;
          APPEND : Boolean;
        };
  }

  entity ORDERS : tagged {
    key ID                 : UUID;
        ORDNAME            : String(16);
        CUSTNAME           : String(16);
        CURDATE            : Date;
        ORDERITEMS_SUBFORM : Composition of many ORDERITEMS
                               on ORDERITEMS_SUBFORM.ORDER = $self;
        // The order's text: one object, not lines.
        ORDERSTEXT_SUBFORM : Composition of one {
          TEXT   : LargeString;
          APPEND : Boolean;
        };
  }

  entity ORDERITEMS : tagged {
    key ID       : UUID;
        ORDER    : Association to ORDERS;
        PARTNAME : String(15);
        TQUANT   : Decimal(15, 4);
        PRICE    : Decimal(15, 4);
        DUEDATE  : Date;
  }

  // The standard's other primitive types (docs/other-services.md, Types):
  // Time is Edm.TimeOfDay, UInt8 Edm.Byte, Int16 Edm.Int16, Integer
  // Edm.Int32.
  entity SHIFTS : tagged {
    key CODE   : String(8);
        STARTS : Time;
        CREW   : UInt8;
        FLOOR  : Int16;
        SEATS  : Integer;
  }
}
