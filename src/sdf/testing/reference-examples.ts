/**
 * The example documents of the public SDF format specification (SDF_FORMAT.md, CC-BY 4.0, etapsky):
 * an invoice, a purchase order and a cargo nomination with full parties, addresses, contacts, payment,
 * delivery, vessel and ports. Tests render them beside the repository's own examples/.
 */

export function referenceInvoice(): Record<string, unknown> {
  return {
    document_type: 'invoice',
    invoice_number: 'INV-2026-00142',
    issue_date: '2026-03-15',
    due_date: '2026-04-15',
    order_ref: 'PO-2026-0042',
    issuer: {
      name: 'Acme Supplies GmbH',
      id: 'DE123456789',
      address: { street: 'Hauptstraße 12', city: 'Berlin', postal_code: '10115', country: 'DE' },
      contact: { name: 'Hans Müller', email: 'h.mueller@acme-supplies.de', phone: '+49 30 12345678' },
    },
    recipient: {
      name: 'Global Logistics AG',
      id: 'CH-123.456.789',
      address: { street: 'Bahnhofstrasse 4', city: 'Zürich', postal_code: '8001', country: 'CH' },
    },
    line_items: [
      {
        description: 'Industrial valve Type-A',
        quantity: 50,
        unit: 'pcs',
        unit_price: { amount: '24.00', currency: 'EUR' },
        vat_rate: '0.19',
        subtotal: { amount: '1200.00', currency: 'EUR' },
      },
      {
        description: 'Gasket set Type-A compatible',
        quantity: 50,
        unit: 'pcs',
        unit_price: { amount: '4.80', currency: 'EUR' },
        vat_rate: '0.19',
        subtotal: { amount: '240.00', currency: 'EUR' },
      },
    ],
    totals: {
      net: { amount: '1440.00', currency: 'EUR' },
      vat: { amount: '273.60', currency: 'EUR' },
      gross: { amount: '1713.60', currency: 'EUR' },
    },
    payment: { iban: 'DE89370400440532013000', bic: 'COBADEFFXXX', reference: 'INV-2026-00142' },
  };
}

export function referencePurchaseOrder(): Record<string, unknown> {
  return {
    document_type: 'purchase_order',
    po_number: 'PO-2026-00388',
    issue_date: '2026-03-01',
    delivery_date: '2026-03-28',
    payment_terms: 'Net 30',
    buyer: {
      name: 'Global Logistics AG',
      id: 'CH-123.456.789',
      address: { street: 'Bahnhofstrasse 4', city: 'Zürich', postal_code: '8001', country: 'CH' },
      contact: { name: 'Thomas Meier', email: 't.meier@global-logistics.ch', phone: '+41 44 000 0000' },
    },
    supplier: {
      name: 'Acme Supplies GmbH',
      id: 'DE123456789',
      address: { street: 'Hauptstraße 12', city: 'Berlin', postal_code: '10115', country: 'DE' },
    },
    line_items: [
      {
        line_number: 1,
        sku: 'VALVE-TYPE-A',
        description: 'Industrial valve Type-A',
        quantity: 50,
        unit: 'pcs',
        unit_price: { amount: '24.00', currency: 'EUR' },
        subtotal: { amount: '1200.00', currency: 'EUR' },
      },
      {
        line_number: 2,
        sku: 'GASKET-A-SET',
        description: 'Gasket set Type-A compatible',
        quantity: 50,
        unit: 'pcs',
        unit_price: { amount: '4.80', currency: 'EUR' },
        subtotal: { amount: '240.00', currency: 'EUR' },
      },
    ],
    totals: {
      net: { amount: '1440.00', currency: 'EUR' },
      vat: { amount: '273.60', currency: 'EUR' },
      gross: { amount: '1713.60', currency: 'EUR' },
    },
    delivery: {
      address: { street: 'Werkstrasse 9', city: 'Basel', postal_code: '4052', country: 'CH' },
      terms: 'DDP Basel',
      instructions: 'Deliver to warehouse entrance, attention: receiving dept.',
    },
  };
}

export function referenceNomination(): Record<string, unknown> {
  return {
    document_type: 'nomination',
    nomination_number: 'NOM-2026-0042',
    issue_date: '2026-03-10',
    contract_ref: 'CT-2025-NE-0017',
    cargo_owner: {
      name: 'Nordic Energy Trading AS',
      id: 'NO-987654321',
      address: { street: 'Strandveien 18', city: 'Oslo', postal_code: '0250', country: 'NO' },
      contact: { name: 'Ingrid Larsen', email: 'i.larsen@nordic-energy.no', phone: '+47 21 00 00 00' },
    },
    agent: {
      name: 'Baltic Ship Agents Ltd',
      id: 'EE-123456789',
      address: { street: 'Sadama 1', city: 'Tallinn', postal_code: '10111', country: 'EE' },
      contact: { name: 'Andrei Kask', email: 'ops@baltic-agents.ee', phone: '+372 600 1234' },
    },
    vessel: { name: 'MV Nordic Star', imo: '9876543', flag: 'NO', dwt: '75000', eta: '2026-03-22T06:00:00+02:00' },
    laycan: { start: '2026-03-21', end: '2026-03-24' },
    port_of_loading: { name: 'Port of Primorsk', locode: 'RU PRI', terminal: 'SPG Terminal 3', country: 'RU' },
    port_of_discharge: {
      name: 'Port of Rotterdam',
      locode: 'NL RTM',
      terminal: 'Europoort Oil Terminal',
      country: 'NL',
    },
    cargo: {
      description: 'Urals Crude Oil',
      quantity: '75000',
      unit: 'MT',
      tolerance: '5',
      tolerance_unit: '%',
      quality_ref: 'GOST R 51858-2002',
    },
    freight: { rate: { amount: '8.50', currency: 'USD' }, rate_unit: 'per MT', terms: 'CFR Rotterdam' },
    notes: "NOR to be tendered on arrival. Free pratique and customs clearance at owner's account.",
  };
}
